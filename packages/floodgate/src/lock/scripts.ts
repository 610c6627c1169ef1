import { LuaScript } from '../redis/index.js'

/** SET NX PX + INCR fence (see the header of `acquire-2.lua`). */
export const acquireScript = new LuaScript(new URL('./acquire-2.lua', import.meta.url))
/** Compare-and-delete (see `release-1.lua`). */
export const releaseScript = new LuaScript(new URL('./release-1.lua', import.meta.url))
/** Compare-and-PEXPIRE, never SET (see `extend-1.lua`). */
export const extendScript = new LuaScript(new URL('./extend-1.lua', import.meta.url))
