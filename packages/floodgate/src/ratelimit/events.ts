import { EventEmitter } from 'node:events'
import type { StoreUnavailableError } from '../errors/index.js'
import type { RateLimitSource } from './types.js'

/** Events a Redis rate limiter emits. */
export interface RateLimiterEvents {
  /** Every decision `limit()` returned (also the source of `floodgate_ratelimit_decisions_total`). */
  decision: [{ key: string; source: RateLimitSource; allowed: boolean }]
  /**
   * Redis could not decide and the fallback answered (`source`: `failOpen`, `failClosed` or
   * `insurance`); `error` says why (refused connection, timeout, not yet connected at start-up).
   */
  fallback: [{ key: string; source: RateLimitSource; allowed: boolean; error: StoreUnavailableError }]
}

/** Typed `EventEmitter` of {@link RateLimiterEvents}. */
export class RateLimiterEventEmitter extends EventEmitter<RateLimiterEvents> {}
