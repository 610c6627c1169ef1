import { ScriptContractError } from '../errors/index.js'
import { LuaScript } from '../redis/lua_script.js'

/** Set one membership (like, favourite) to a state; ranking and event on a change (`lua/toggle-5.lua`). */
export const toggleScript = new LuaScript(new URL('./lua/toggle-5.lua', import.meta.url))
/** The toggles of one partition and poll phase in one call, answered per toggle (`lua/toggle-batch-n.lua`). */
export const toggleBatchScript = new LuaScript(new URL('./lua/toggle-batch-n.lua', import.meta.url))
/** Whether one user likes / favourited one item, read-only, exact across buckets (`lua/member-flags-2.lua`). */
export const memberFlagsScript = new LuaScript(new URL('./lua/member-flags-2.lua', import.meta.url))
/** Count a play once per viewer per dedupe window, viewers hashed into intset buckets (`lua/play-6.lua`). */
export const playScript = new LuaScript(new URL('./lua/play-6.lua', import.meta.url))
/** The plays of one partition and poll phase in one call, answered per play (`lua/play-batch-n.lua`). */
export const playBatchScript = new LuaScript(new URL('./lua/play-batch-n.lua', import.meta.url))
/** Which entries of a flush batch are no longer pending in the group (`lua/still-pending-1.lua`). */
export const stillPendingScript = new LuaScript(new URL('./lua/still-pending-1.lua', import.meta.url))

/** What `toggle-5.lua` and `play-6.lua` answer: whether it counted, the count after, the event id. */
export interface InteractionReply {
  /** True when the item is forgotten (its tombstone is set): nothing changed, `count` is 0. */
  gone: boolean
  changed: boolean
  count: number
  /** Stream entry id of the event appended, undefined when nothing changed. */
  eventId: string | undefined
}

/**
 * `{ 1 | 0 | -1, count, event id }` of `toggle-5.lua` or `play-6.lua` (-1: the item is forgotten).
 * @throws {ScriptContractError} on any other reply (`script` names it).
 */
export function interactionReply(script: LuaScript, reply: unknown): InteractionReply {
  if (
    Array.isArray(reply) &&
    reply.length === 3 &&
    (reply[0] === 0 || reply[0] === 1 || reply[0] === -1) &&
    typeof reply[1] === 'number' &&
    typeof reply[2] === 'string'
  ) {
    return {
      gone: reply[0] === -1,
      changed: reply[0] === 1,
      count: reply[1],
      eventId: reply[2] === '' ? undefined : reply[2],
    }
  }
  throw new ScriptContractError(script.name, reply)
}
