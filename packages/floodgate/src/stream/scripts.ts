import { ScriptContractError } from '../errors/index.js'
import { replyCodes } from '../redis/lua_reply.js'
import { LuaScript } from '../redis/lua_script.js'

/** Trim below the oldest entry any group still needs, and report the lag (`lua/trim-1.lua`). */
export const trimScript = new LuaScript(new URL('./lua/trim-1.lua', import.meta.url))
/** Move one pending entry to the dead-letter stream and acknowledge it (`lua/dead-letter-2.lua`). */
export const deadLetterScript = new LuaScript(new URL('./lua/dead-letter-2.lua', import.meta.url))
/** XREADGROUP of one stream, one string per entry (`lua/read-compact-1.lua`). */
export const readCompactScript = new LuaScript(new URL('./lua/read-compact-1.lua', import.meta.url))
/** One heartbeat in the group's member set, and the live members (`lua/members-1.lua`). */
export const membersScript = new LuaScript(new URL('./lua/members-1.lua', import.meta.url))

/** One stream's lag as `trim-1.lua` reports it; times in ms (Redis clock). */
export interface TrimReply {
  trimmed: number
  length: number
  pending: number
  /** Id of the oldest pending entry, '' when none. */
  oldestPendingId: string
  /** Id of the first entry no group has read yet, '' when none. */
  firstUndeliveredId: string
  nowMs: number
  undelivered: number
  /** Id of the stream's last entry when the stream is idle (see `trim-1.lua`), else ''. */
  idleLastId: string
}

/** `trim-1.lua`: `{ trimmed, length, pending, oldest id, first undelivered id, now, undelivered, idle last id }`. */
export function trimReply(reply: unknown): TrimReply {
  if (!Array.isArray(reply) || reply.length !== 8) throw new ScriptContractError(trimScript.name, reply)
  const [trimmed, length, pending, oldestPendingId, firstUndeliveredId, nowMs, undelivered, idleLastId] =
    reply as [number, number, number, string, string, number, number, string]
  return { trimmed, length, pending, oldestPendingId, firstUndeliveredId, nowMs, undelivered, idleLastId }
}

/** `dead-letter-2.lua`: moved, or the entry was no longer pending (nothing done). */
export const deadLetterReply = replyCodes(deadLetterScript.name, { moved: 1, notPending: 0 })

/**
 * `members-1.lua`: the live members' names, sorted. The script adds the caller before listing,
 * so an unexpected reply counts the caller (`self`) alone.
 */
export function membersReply(reply: unknown, self: string): string[] {
  return (Array.isArray(reply) ? reply.map(String) : [self]).sort()
}
