import type { Deadline } from '../../deadline/index.js'
import type { KeySpace } from '../../redis/key_space.js'
import { LuaScript } from '../../redis/lua_script.js'
import type { RedisClient } from '../../redis/types.js'
import { limiterTag, stateSuffixes } from '../redis_scripts.js'
import { type BatchItem, ScriptBatcher } from '../script_batch.js'
import type { RateLimitAlgorithm, RateLimitPolicy } from '../types.js'

/** The algorithms the leased mode runs: the window counters, whose quota is a count per aligned window. */
export type LeasedAlgorithm = Extract<RateLimitAlgorithm, 'fixedWindow' | 'slidingWindow'>

/** Every algorithm the leased mode runs. */
export const LEASED_ALGORITHMS: readonly LeasedAlgorithm[] = ['fixedWindow', 'slidingWindow']

// One literal URL per script: the build embeds each `.lua` file where its URL is written.
const leaseScripts: Record<LeasedAlgorithm, LuaScript> = {
  fixedWindow: new LuaScript(new URL('../lua/lease-fixed-window-n.lua', import.meta.url)),
  slidingWindow: new LuaScript(new URL('../lua/lease-sliding-window-n.lua', import.meta.url)),
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
 * One limiter's lease calls, the calls of one event-loop poll phase sent as one script call
 * ({@link ScriptBatcher}; policy arguments stringified once), one deadline watching the call.
 */
export class LeaseCalls {
  private readonly batcher: ScriptBatcher
  private readonly taggedOf: (key: string) => string

  /**
   * @param maxBatch most lease calls of one script call (1: a script call per lease call).
   * @param deadline watches each script call (ms; see `watchDeadline`); without it a call waits
   *   for its reply however late. An item failed by it still hears the call's late outcome
   *   ({@link BatchItem.answeredLate}, {@link BatchItem.lost}).
   * @param what names the limiter in timeout errors.
   */
  constructor(
    redis: RedisClient,
    keySpace: KeySpace,
    policy: RateLimitPolicy,
    fraction: number,
    maxBatch: number,
    deadline?: Deadline,
    what = `lease ${policy.name}`,
  ) {
    const algorithm = policy.algorithm as LeasedAlgorithm
    const script = leaseScripts[algorithm]
    this.taggedOf = limiterTag(keySpace, policy)
    this.batcher = new ScriptBatcher({
      client: redis,
      script,
      suffixes: [...stateSuffixes(algorithm), ...grantSuffixes[algorithm]].map((suffix) => `:${suffix}`),
      shared: [String(policy.limit), String(policy.windowMs), String(fraction)],
      head: 2,
      width: 5,
      maxItems: maxBatch,
      ...(deadline === undefined ? {} : { deadline }),
      what,
      lateOutcomes: true,
    })
  }

  /**
   * Queues one lease call (arguments as {@link call}'s, no cancel) answered to `item`: its
   * integers are `[granted, slice, free, resetAtMs, retryAfterMs]` at `at`, after the batch's
   * head `[nowMs, windowIndex]` (see {@link leaseReply}).
   */
  add(
    key: string,
    cost: number,
    giveBack: number,
    giveBackIndex: number,
    grantId: string,
    item: BatchItem,
  ): void {
    this.batcher.add(this.taggedOf(key), [cost, giveBack, giveBackIndex, grantId, ''], item)
  }

  /**
   * One lease call: gives back `giveBack` units of the lease of window `giveBackIndex` (-1: none),
   * reserves a slice for `cost` and records it under `grantId` (`''`: not recorded). With
   * `cancelId` (cost and give-back 0) it cancels the call that carried that grant id instead: the
   * units that call reserved go back, once; if it has not run yet, it will reserve nothing.
   * Rejects with StoreUnavailableError on a Redis or connection error, or past the deadline given
   * to the constructor (RedisTimeoutError), and with ScriptContractError if the reply breaks the
   * script's contract.
   */
  call(
    key: string,
    cost: number,
    giveBack: number,
    giveBackIndex: number,
    grantId = '',
    cancelId = '',
  ): Promise<LeaseReply> {
    return new Promise((resolve, reject) =>
      this.batcher.add(
        this.taggedOf(key),
        [cost, giveBack, giveBackIndex, grantId, cancelId],
        new PendingLease(resolve, reject),
      ),
    )
  }

  /** Sends the queued lease calls now. */
  flush(): void {
    this.batcher.flush()
  }
}

/** One queued lease call: maps its part of the batch reply, `[granted, slice, free, resetAtMs, retryAfterMs]`. */
class PendingLease implements BatchItem {
  constructor(
    private readonly resolve: (reply: LeaseReply) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  answered(reply: readonly number[], at: number): void {
    this.resolve(leaseReply(reply, at))
  }

  failed(error: unknown): void {
    this.reject(error)
  }
}

/** One lease call's answer in a batch reply: its integers at `at`, the batch's head at 0 and 1. */
export function leaseReply(reply: readonly number[], at: number): LeaseReply {
  return {
    granted: reply[at] === 1,
    slice: reply[at + 1]!,
    free: reply[at + 2]!,
    resetAtMs: reply[at + 3]!,
    retryAfterMs: reply[at + 4]!,
    nowMs: reply[0]!,
    windowIndex: reply[1]!,
  }
}
