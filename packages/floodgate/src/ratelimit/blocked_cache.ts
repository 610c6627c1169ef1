import { LRUCache } from 'lru-cache'
import type { RateLimitPolicy, RateLimitResult } from './types.js'

/**
 * Remembers keys that Redis rejected with nothing left (remaining 0, cost 1), until
 * their retry time on the local clock, so a client hammering past its limit stops
 * costing Redis calls. Bounded by an LRU of `maxKeys`. A remembered block can only
 * end later than Redis would allow (the deadline starts after the reply arrives),
 * never earlier, so it never admits what Redis would reject.
 */
export class BlockedCache {
  private readonly until: LRUCache<string, number>

  constructor(maxKeys: number) {
    this.until = new LRUCache<string, number>({ max: maxKeys })
  }

  /** Records a Redis rejection if it blocks every cost. */
  remember(key: string, cost: number, result: RateLimitResult, localNowMs: number): void {
    if (result.allowed || cost !== 1 || result.remaining !== 0 || result.retryAfterMs <= 0) return
    this.until.set(key, localNowMs + result.retryAfterMs)
  }

  /** Forgets `key`'s block (after a reset of its quota). */
  forget(key: string): void {
    this.until.delete(key)
  }

  /** A rejection from memory while `key` is still blocked, else undefined. */
  check(key: string, policy: RateLimitPolicy, localNowMs: number): RateLimitResult | undefined {
    const until = this.until.get(key)
    if (until === undefined) return undefined
    if (until <= localNowMs) {
      this.until.delete(key)
      return undefined
    }
    return {
      allowed: false,
      limit: policy.limit,
      remaining: 0,
      resetAtMs: until,
      retryAfterMs: until - localNowMs,
      nowMs: localNowMs,
      policy,
      source: 'blockedCache',
    }
  }
}
