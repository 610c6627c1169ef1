import { describe, expect, it } from 'vitest'
import { createMemoryRateLimiter, InvalidArgumentError } from '../../src/index.js'

// Test 4 (bounded under a million distinct keys) and the in-memory algorithms on a fake clock.
describe('in-memory limiter', () => {
  it('holds at most maxKeys keys under 1,000,000 distinct keys', { timeout: 60_000 }, () => {
    const limiter = createMemoryRateLimiter({
      algorithm: 'slidingWindow',
      limit: 10,
      windowMs: 60_000,
      maxKeys: 5000,
    })
    let largest = 0
    for (let i = 0; i < 1_000_000; i++) {
      limiter.check(`ip-${i}`)
      if (i % 10_000 === 0) largest = Math.max(largest, limiter.size)
    }
    largest = Math.max(largest, limiter.size)
    expect(largest).toBe(5000)
    // the most recent keys are still tracked (LRU keeps them), the oldest were evicted
    expect(limiter.check('ip-999999', { cost: 10 }).allowed).toBe(false)
    expect(limiter.check('ip-0', { cost: 10 }).allowed).toBe(true)
  })

  it('token bucket: burst, then limit / windowMs refill, nothing taken on rejection', () => {
    let now = 1_000_000
    const limiter = createMemoryRateLimiter({
      algorithm: 'tokenBucket',
      limit: 10,
      windowMs: 1000,
      burst: 5,
      now: () => now,
    })
    expect(limiter.check('k', { cost: 5 })).toMatchObject({ allowed: true, remaining: 0, source: 'memory' })
    const rejected = limiter.check('k', { cost: 2 })
    expect(rejected).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 200 })
    now += 100 // one token back (10 per 1000 ms)
    expect(limiter.check('k', { cost: 2 }).allowed).toBe(false)
    now += 100
    expect(limiter.check('k', { cost: 2 })).toMatchObject({ allowed: true, remaining: 0 })
    expect(limiter.check('k', { cost: 6 }).retryAfterMs).toBe(-1) // above burst: never fits
    now += 10_000
    expect(limiter.check('k').remaining).toBe(4) // capped at burst
  })

  it('sliding window: weights the previous window by its remaining overlap', () => {
    let now = 60_000 * 100 + 59_000 // 1 s before an edge
    const limiter = createMemoryRateLimiter({
      algorithm: 'slidingWindow',
      limit: 10,
      windowMs: 60_000,
      now: () => now,
    })
    expect(limiter.check('k', { cost: 10 }).allowed).toBe(true)
    now += 1000 + 15_000 // 15 s into the next window: estimate = 10 × 45/60 = 7.5
    expect(limiter.check('k', { cost: 2 })).toMatchObject({ allowed: true, remaining: 0 })
    const rejected = limiter.check('k')
    // estimate 9.5 + 1 > 10: wait until 10 × (60 − e)/60 ≤ 10 − 2 − 1 = 7, e = 18 s, 3 s from now
    expect(rejected).toMatchObject({ allowed: false, retryAfterMs: 3000 })
    now += 3000
    expect(limiter.check('k').allowed).toBe(true)
  })

  it('validates its options', () => {
    expect(() =>
      createMemoryRateLimiter({ algorithm: 'tokenBucket', limit: 1, windowMs: 1, maxKeys: 0 }),
    ).toThrow(InvalidArgumentError)
    expect(() =>
      createMemoryRateLimiter({ algorithm: 'gcra' as 'tokenBucket', limit: 1, windowMs: 1 }),
    ).toThrow(/algorithm/)
  })
})
