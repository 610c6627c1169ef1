import { ScriptContractError } from '../errors/index.js'
import { LuaScript } from '../redis/index.js'
import { replyCodes } from '../redis/lua_reply.js'

/** Batch membership test on one shard (see `lua/check-1.lua`). */
export const checkScript = new LuaScript(new URL('./lua/check-1.lua', import.meta.url))
/** Batch bit-set on one existing shard (see `lua/add-1.lua`). */
export const addScript = new LuaScript(new URL('./lua/add-1.lua', import.meta.url))
/** OR of a staged bitmap into one existing shard (see `lua/merge-2.lua`). */
export const mergeScript = new LuaScript(new URL('./lua/merge-2.lua', import.meta.url))
/** Generation switch (see `lua/publish-1.lua`). */
export const publishScript = new LuaScript(new URL('./lua/publish-1.lua', import.meta.url))
/** Add numbering and announcement to replicas (see `lua/announce-1.lua`). */
export const announceScript = new LuaScript(new URL('./lua/announce-1.lua', import.meta.url))

/** `add-1.lua`: the bits were set, or the shard key does not exist (nothing written). */
export const addReply = replyCodes(addScript.name, { written: 1, noShard: 0 })
/** `merge-2.lua`: the staged bits were merged, or the shard key does not exist (nothing written). */
export const mergeReply = replyCodes(mergeScript.name, { merged: 1, noShard: 0 })

/** `publish-1.lua`: the generation served before (0 if none), or null when superseded (-1). */
export function publishReply(reply: unknown): number | null {
  if (reply === -1) return null
  if (typeof reply !== 'number' || reply < 0) throw new ScriptContractError(publishScript.name, reply)
  return reply
}

/** `announce-1.lua`: the add's sequence number (>= 1). */
export function announceReply(reply: unknown): number {
  if (typeof reply !== 'number' || reply < 1) throw new ScriptContractError(announceScript.name, reply)
  return reply
}

/**
 * `check-1.lua` for `items` items: one answer per item (true "maybe present"), or null when the
 * shard key does not exist (the generation is gone: no answer is trustworthy).
 */
export function checkReply(reply: unknown, items: number): boolean[] | null {
  if (reply === null) return null
  if (!Array.isArray(reply) || reply.length !== items) throw new ScriptContractError(checkScript.name, reply)
  return reply.map((bit) => bit === 1)
}
