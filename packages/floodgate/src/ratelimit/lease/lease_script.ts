import { ScriptContractError } from '../../errors/index.js'
import type { KeySpace } from '../../redis/key_space.js'
import { LuaScript } from '../../redis/lua_script.js'
import type { RedisClient } from '../../redis/types.js'
import { limiterTag, stateSuffixes } from '../redis_scripts.js'
import type { RateLimitAlgorithm, RateLimitPolicy } from '../types.js'

/** The algorithms the leased mode runs: the window counters, whose quota is a count per aligned window. */
export type LeasedAlgorithm = Extract<RateLimitAlgorithm, 'fixedWindow' | 'slidingWindow'>

/** Every algorithm the leased mode runs. */
export const LEASED_ALGORITHMS: readonly LeasedAlgorithm[] = ['fixedWindow', 'slidingWindow']

// One literal URL per script: the build embeds each `.lua` file where its URL is written.
const leaseScripts: Record<LeasedAlgorithm, LuaScript> = {
  fixedWindow: new LuaScript(new URL('../lua/lease-fixed-window-1.lua', import.meta.url)),
  slidingWindow: new LuaScript(new URL('../lua/lease-sliding-window-2.lua', import.meta.url)),
}

/** What one lease call answers; times in ms on the Redis clock. See `lua/lease-*.lua`. */
export interface LeaseReply {
  /** A slice was reserved (always, for cost 0). */
  granted: boolean
  /** Units reserved for this instance (≥ cost when granted, 0 otherwise). */
  slice: number
  /** Units of the quota nobody holds after the call. */
  free: number
  resetAtMs: number
  /** 0 when granted; ms until the cost fits; -1 when it never can. */
  retryAfterMs: number
  nowMs: number
  /** floor(nowMs / windowMs): the only window in which the slice may be spent. */
  windowIndex: number
}

/** One lease call: gives back `giveBack` units of the lease of window `giveBackIndex` (-1: none), reserves a slice for `cost`. */
export type LeaseCall = (
  client: RedisClient,
  key: string,
  cost: number,
  giveBack: number,
  giveBackIndex: number,
) => Promise<LeaseReply>

/**
 * Prepares one limiter's lease call (policy arguments stringified once).
 * The call rejects with StoreUnavailableError on a Redis or connection error and with
 * ScriptContractError if the reply is not seven integers.
 */
export function prepareLeaseScript(keySpace: KeySpace, policy: RateLimitPolicy, fraction: number): LeaseCall {
  const script = leaseScripts[policy.algorithm as LeasedAlgorithm]
  const suffixes = stateSuffixes(policy.algorithm).map((suffix) => `:${suffix}`)
  const taggedOf = limiterTag(keySpace, policy)
  const head = [String(policy.limit), String(policy.windowMs)]
  const fractionArg = String(fraction)
  const toReply = (reply: unknown): LeaseReply => leaseReplyOf(script.name, reply)
  return (client, key, cost, giveBack, giveBackIndex) => {
    const tagged = taggedOf(key)
    const argv: (string | number)[] = [script.sha1, script.numberOfKeys]
    for (const suffix of suffixes) argv.push(tagged + suffix)
    argv.push(head[0]!, head[1]!, cost, fractionArg, giveBack, giveBackIndex)
    return script.send(client, argv).then(toReply)
  }
}

function leaseReplyOf(scriptName: string, reply: unknown): LeaseReply {
  if (!Array.isArray(reply) || reply.length !== 7 || !reply.every((n) => typeof n === 'number'))
    throw new ScriptContractError(scriptName, reply)
  const [granted, slice, free, resetAtMs, retryAfterMs, nowMs, windowIndex] = reply as number[]
  return {
    granted: granted === 1,
    slice: slice!,
    free: free!,
    resetAtMs: resetAtMs!,
    retryAfterMs: retryAfterMs!,
    nowMs: nowMs!,
    windowIndex: windowIndex!,
  }
}
