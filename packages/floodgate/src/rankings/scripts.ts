import { ScriptContractError } from '../errors/index.js'
import { LuaScript } from '../redis/lua_script.js'
import { parseScore } from './finite.js'

/** One event into a log-space decayed score (`lua/decay-add-1.lua`). */
export const decayAddScript = new LuaScript(new URL('./lua/decay-add-1.lua', import.meta.url))

/** `decay-add-1.lua`: the new score, sent as a string (a Lua number would be truncated). */
export function decayAddReply(reply: unknown): number {
  if (typeof reply !== 'string') throw new ScriptContractError(decayAddScript.name, reply)
  return parseScore(reply)
}

/** One partition's decayed merge of a trending window's minute buckets, top N (`lua/window-top-1.lua`). */
export const windowTopScript = new LuaScript(new URL('./lua/window-top-1.lua', import.meta.url))
