import { ScriptContractError } from '../errors/index.js'
import { replyCodes } from '../redis/lua_reply.js'
import { LuaScript } from '../redis/lua_script.js'

/** Take the loader lock of a key after a miss, reading its data version (see `lua/claim-4.lua`). */
export const claimScript = new LuaScript(new URL('./lua/claim-4.lua', import.meta.url))
/** Write a loaded value if the version did not move and the lock is still ours (`lua/fill-4.lua`). */
export const fillScript = new LuaScript(new URL('./lua/fill-4.lua', import.meta.url))
/** The L2 reads of L1 misses, each claiming its lock when absent (`lua/read-claim-n.lua`). */
export const readClaimScript = new LuaScript(new URL('./lua/read-claim-n.lua', import.meta.url))
/** Give up (or keep as a back-off) a failed loader's lock and wake waiters (`lua/abandon-2.lua`). */
export const abandonScript = new LuaScript(new URL('./lua/abandon-2.lua', import.meta.url))
/** Delete a value and move its version (`lua/invalidate-2.lua`). */
export const invalidateScript = new LuaScript(new URL('./lua/invalidate-2.lua', import.meta.url))
/** Write-through: write a value and move its version (`lua/set-2.lua`). */
export const setScript = new LuaScript(new URL('./lua/set-2.lua', import.meta.url))

/** What `claim-4.lua` answered. */
export type Claim =
  | { kind: 'exists' }
  | { kind: 'acquired'; version: string }
  | { kind: 'busy'; version: string; pttlMs: number }

/** `claim-4.lua`: `{0}`, `{1, version}` or `{2, version, pttl}`. */
export function claimReply(reply: unknown): Claim {
  if (!Array.isArray(reply)) throw new ScriptContractError(claimScript.name, reply)
  const [state, version, pttl] = reply as [number, string | undefined, number | undefined]
  if (state === 0) return { kind: 'exists' }
  if (state === 1 && typeof version === 'string') return { kind: 'acquired', version }
  if (state === 2 && typeof version === 'string' && typeof pttl === 'number') {
    return { kind: 'busy', version, pttlMs: pttl }
  }
  throw new ScriptContractError(claimScript.name, reply)
}

/** One item's answer from `read-claim-n.lua`: the value's bytes, or the claim (no `exists`: the read is the check). */
export type ReadClaim =
  | { kind: 'value'; bytes: Buffer }
  | { kind: 'acquired'; version: string }
  | { kind: 'busy'; version: string; pttlMs: number }

/**
 * `read-claim-n.lua` (Buffer replies): one `{0, value}`, `{1, version}` or `{2, version, pttl}`
 * per item, `items` of them.
 * @throws {ScriptContractError} for any other shape.
 */
export function readClaimReplies(reply: unknown, items: number): ReadClaim[] {
  if (!Array.isArray(reply) || reply.length !== items)
    throw new ScriptContractError(readClaimScript.name, reply)
  return reply.map((item: unknown) => {
    if (Array.isArray(item) && Buffer.isBuffer(item[1])) {
      const [state, bytes, pttl] = item as [unknown, Buffer, unknown]
      if (state === 0 && item.length === 2) return { kind: 'value', bytes }
      const version = bytes.toString('latin1')
      if (state === 1 && item.length === 2) return { kind: 'acquired', version }
      if (state === 2 && typeof pttl === 'number') return { kind: 'busy', version, pttlMs: pttl }
    }
    throw new ScriptContractError(readClaimScript.name, reply)
  })
}

/** `fill-4.lua`: written, or why not. */
export const fillReply = replyCodes(fillScript.name, {
  written: 1,
  version_moved: 0,
  lock_lost: -1,
  value_present: -2,
})

/** What `fill-4.lua` answered. */
export type FillResult = ReturnType<typeof fillReply>
