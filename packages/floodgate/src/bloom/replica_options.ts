import type { Deadline } from '../deadline/index.js'
import type { Logger } from '../observability/index.js'
import type { RedisClient } from '../redis/index.js'
import type { BloomFilter } from './bloom_filter.js'

export interface BloomReplicaOptions {
  /** The filter to replicate; its client serves the syncs and the fallback queries. */
  filter: BloomFilter
  /**
   * Client for loading the bits (m / 8 bytes per load): give one with a roomier command timeout
   * than the read path's. @default the filter's client
   */
  loadRedis?: RedisClient
  /** Deadline of each sync read and fallback query (ms). @default DEADLINE_DEFAULTS (50 ms idle, 2,000 ms wall) */
  deadline?: Deadline
  /** Idle event-loop time (ms) to wait for announced adds after a sync found the replica behind (time the process spent busy does not count; at most the deadline's `maxWaitMs` of wall time). @default 50 */
  catchUpWaitMs?: number
  /** Announcements buffered while a load runs; past this the load starts over. @default 10_000 */
  maxBufferedMessages?: number
  /** Cap of the first wait (ms) before retrying a failed or not-ready load (full jitter); doubles up to `retryMaxMs`. @default 100 */
  retryBaseMs?: number
  /** Longest wait (ms) between load attempts. @default 5_000 */
  retryMaxMs?: number
  /** Where a failed load of the bits is logged (warn; it is retried); see {@link Logger}. @default none (the `loadError` event only) */
  logger?: Logger
}

/** Defaults of {@link BloomReplicaOptions}, in one place. */
export const BLOOM_REPLICA_DEFAULTS = {
  catchUpWaitMs: 50,
  maxBufferedMessages: 10_000,
  retryBaseMs: 100,
  retryMaxMs: 5_000,
} as const

/**
 * `not-loaded`: no bits yet (queries go to Redis); `live`: answering from the bits, announcements
 * applied in order; `reloading`: loading afresh while still answering from the old bits; `closed`.
 */
export type BloomReplicaState = 'not-loaded' | 'live' | 'reloading' | 'closed'

/** Why a load started. */
export type BloomReplicaReloadReason = 'start' | 'gap' | 'generation' | 'reconnect' | 'overflow' | 'retry'

export interface BloomReplicaEvents {
  state: [BloomReplicaState]
  reload: [{ reason: BloomReplicaReloadReason }]
  /** A load failed (Redis error or unstable generations); it is retried with backoff. */
  loadError: [unknown]
}
