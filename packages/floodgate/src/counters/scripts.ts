import { ScriptContractError } from '../errors/index.js'
import { replyCodes } from '../redis/lua_reply.js'
import { LuaScript } from '../redis/lua_script.js'

/** Put an item's members back from PostgreSQL, once per recovery (`lua/restore-members-4.lua`). */
export const restoreMembersScript = new LuaScript(new URL('./lua/restore-members-4.lua', import.meta.url))
/** Put an item's play count back from PostgreSQL (`lua/restore-plays-3.lua`). */
export const restorePlaysScript = new LuaScript(new URL('./lua/restore-plays-3.lua', import.meta.url))
/** End a rebuild: set the epoch marker if the rebuild lock is still ours (`lua/commit-epoch-2.lua`). */
export const commitEpochScript = new LuaScript(new URL('./lua/commit-epoch-2.lua', import.meta.url))

/** `restore-members-4.lua`: whether the members were added (first restore), and SCARD after. */
export function restoreMembersReply(reply: unknown): { restored: boolean; count: number } {
  if (!Array.isArray(reply) || typeof reply[0] !== 'number' || typeof reply[1] !== 'number')
    throw new ScriptContractError(restoreMembersScript.name, reply)
  return { restored: reply[0] === 1, count: reply[1] }
}

/** `restore-plays-3.lua`: the counter after the step. */
export function restorePlaysReply(reply: unknown): number {
  if (typeof reply !== 'number') throw new ScriptContractError(restorePlaysScript.name, reply)
  return reply
}

/** `commit-epoch-2.lua`: the epoch was set, or the rebuild lock was no longer ours. */
export const commitEpochReply = replyCodes(commitEpochScript.name, { committed: 1, lockLost: 0 })
