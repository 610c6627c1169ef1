import { EventEmitter } from 'node:events'
import type { BreakerState } from '../circuit_breaker/index.js'

/**
 * Outcomes counted per call or per incident (also the `outcome` label of the metric). A
 * `getOrLoad` call ends in one of `l1_hit`, `l2_hit`, `negative_hit`, `bloom_reject`,
 * `stale_served`, `load` or `load_joined` (it shared another call's load in this process), so a
 * hit ratio computed from those is per call; `lock_wait`, `wait_timeout`, `redis_error` and
 * `corrupt` are incidents on the way.
 */
export const CACHE_OUTCOMES = [
  'l1_hit',
  'l2_hit',
  'negative_hit',
  'bloom_reject',
  'load',
  'load_joined',
  'lock_wait',
  'wait_timeout',
  'stale_served',
  'redis_error',
  'corrupt',
] as const

export type CacheOutcome = (typeof CACHE_OUTCOMES)[number]

/** Payload of an outcome event. `durationMs` is set on `load` (loader time, ms). */
export interface CacheOutcomeEvent {
  outcome: CacheOutcome
  key?: string
  durationMs?: number
  error?: unknown
}

/** Events a cache emits. */
export interface CacheEvents {
  /** Every counted outcome. */
  outcome: [CacheOutcomeEvent]
  /** The L2 circuit breaker changed state. */
  breaker: [{ state: BreakerState; previous: BreakerState }]
  /**
   * A background refresh (stale-while-revalidate), a miss's fill (run after its caller was
   * answered), an invalidation retry or a namespace clear broadcast failed for good (`key`: the namespace's name for `clear`).
   */
  background_error: [{ key: string; error: unknown; task: 'refresh' | 'fill' | 'invalidate' | 'clear' }]
}

/** Typed `EventEmitter` of {@link CacheEvents}. */
export class CacheEventEmitter extends EventEmitter<CacheEvents> {}
