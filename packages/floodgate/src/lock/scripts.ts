import { ScriptContractError } from '../errors/index.js'
import { replyCodes } from '../redis/lua_reply.js'
import { LuaScript } from '../redis/lua_script.js'

/** SET NX PX + INCR fence (see the header of `lua/acquire-2.lua`). */
export const acquireScript = new LuaScript(new URL('./lua/acquire-2.lua', import.meta.url))
/** Compare-and-delete (see `lua/release-1.lua`). */
export const releaseScript = new LuaScript(new URL('./lua/release-1.lua', import.meta.url))
/** Compare-and-PEXPIRE, never SET (see `lua/extend-1.lua`). */
export const extendScript = new LuaScript(new URL('./lua/extend-1.lua', import.meta.url))

/** `acquire-2.lua`: the new fencing token, or null when someone else holds the lock. */
export function acquireReply(reply: unknown): number | null {
  if (reply === null) return null
  if (typeof reply !== 'number') throw new ScriptContractError(acquireScript.name, reply)
  return reply
}
/** `release-1.lua`: whether the key still held our token (and is now deleted). */
export const releaseReply = replyCodes(releaseScript.name, { released: 1, notOurs: 0 })
/** `extend-1.lua`: whether the key still held our token (and its TTL was reset). */
export const extendReply = replyCodes(extendScript.name, { extended: 1, notOurs: 0 })
