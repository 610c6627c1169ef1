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
  fixedWindow: new LuaScript(new URL('../lua/lease-fixed-window-2.lua', import.meta.url)),
  slidingWindow: new LuaScript(new URL('../lua/lease-sliding-window-4.lua', import.meta.url)),
}

/** Key suffixes of the grants record (`lua/includes/lease-grants.lua`), after the counters' in each script's KEYS. */
const grantSuffixes: Record<LeasedAlgorithm, readonly string[]> = {
  fixedWindow: ['fwg'],
  slidingWindow: ['swg0', 'swg1'],
}

/**
 * The keys the leased mode adds to a limiter key's counters (its grants record), for a reset.
 * Empty for an algorithm the leased mode does not run.
 */
export function leaseGrantKeys(keySpace: KeySpace, policy: RateLimitPolicy, key: string): string[] {
  const suffixes = grantSuffixes[policy.algorithm as LeasedAlgorithm] ?? []
  const tagged = limiterTag(keySpace, policy)(key)
  return suffixes.map((suffix) => `${tagged}:${suffix}`)
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

/**
 * One lease call: gives back `giveBack` units of the lease of window `giveBackIndex` (-1: none),
 * reserves a slice for `cost` and records it under `grantId` (`''`: not recorded). With
 * `cancelId` (cost and give-back 0) it cancels the call that carried that grant id instead: the
 * units that call reserved go back, once; if it has not run yet, it will reserve nothing.
 */
export type LeaseCall = (
  client: RedisClient,
  key: string,
  cost: number,
  giveBack: number,
  giveBackIndex: number,
  grantId?: string,
  cancelId?: string,
) => Promise<LeaseReply>

/**
 * Prepares one limiter's lease call (policy arguments stringified once).
 * The call rejects with StoreUnavailableError on a Redis or connection error and with
 * ScriptContractError if the reply is not seven integers.
 */
export function prepareLeaseScript(keySpace: KeySpace, policy: RateLimitPolicy, fraction: number): LeaseCall {
  const script = leaseScripts[policy.algorithm as LeasedAlgorithm]
  const suffixes = [
    ...stateSuffixes(policy.algorithm),
    ...grantSuffixes[policy.algorithm as LeasedAlgorithm],
  ].map((suffix) => `:${suffix}`)
  const taggedOf = limiterTag(keySpace, policy)
  const head = [String(policy.limit), String(policy.windowMs)]
  const fractionArg = String(fraction)
  const toReply = (reply: unknown): LeaseReply => leaseReplyOf(script.name, reply)
  return (client, key, cost, giveBack, giveBackIndex, grantId = '', cancelId = '') => {
    const tagged = taggedOf(key)
    const argv: (string | number)[] = [script.sha1, script.numberOfKeys]
    for (const suffix of suffixes) argv.push(tagged + suffix)
    argv.push(head[0]!, head[1]!, cost, fractionArg, giveBack, giveBackIndex, grantId, cancelId)
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
