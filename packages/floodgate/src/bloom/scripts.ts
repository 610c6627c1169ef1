import { LuaScript } from '../redis/index.js'

/** Batch membership test on one shard (see `check-1.lua`). */
export const checkScript = new LuaScript(new URL('./check-1.lua', import.meta.url))
/** Batch bit-set on one existing shard (see `add-1.lua`). */
export const addScript = new LuaScript(new URL('./add-1.lua', import.meta.url))
/** OR of a staged bitmap into one existing shard (see `merge-2.lua`). */
export const mergeScript = new LuaScript(new URL('./merge-2.lua', import.meta.url))
/** Generation switch (see `publish-1.lua`). */
export const publishScript = new LuaScript(new URL('./publish-1.lua', import.meta.url))
/** Add numbering and announcement to replicas (see `announce-1.lua`). */
export const announceScript = new LuaScript(new URL('./announce-1.lua', import.meta.url))
