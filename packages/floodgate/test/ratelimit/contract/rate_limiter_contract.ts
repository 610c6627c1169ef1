import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, type RateLimiter, type RateLimitSource } from '../../../src/index.js'

/** What every registration gives the contract suite. */
export interface RateLimiterRegistration {
  /** Describes the implementation in test names, e.g. `redis gcra`. */
  name: string
  /** The `source` its own decisions carry. */
  source: RateLimitSource
  /** A Redis limiter's mode. @default 'exact' */
  mode?: 'exact' | 'leased'
  /**
   * A fresh limiter of `limit` units per 60 s window (burst = limit where the algorithm has one):
   * nothing refills or slides during a test.
   */
  create(limit: number): RateLimiter
}

/** Whatever `limit()` raised, synchronously or as a rejection (undefined when it resolved). */
async function raised(call: () => Promise<unknown>): Promise<unknown> {
  try {
    await call()
    return undefined
  } catch (error) {
    return error
  }
}

/**
 * The behaviour every `RateLimiter` promises, whatever its algorithm and store (bentocache's
 * driver test suite is the model: one suite, one registration per implementation).
 */
export function rateLimiterContract(registration: RateLimiterRegistration): void {
  const { name, source, create, mode = 'exact' } = registration

  describe(`RateLimiter contract: ${name}`, () => {
    it('admits `limit` units of a fresh key, counting `remaining` down, then rejects', async () => {
      const limiter = create(3)
      const remaining: number[] = []
      for (let i = 0; i < 3; i++) {
        const result = await limiter.limit('k')
        expect([result.allowed, result.source]).toEqual([true, source])
        expect(result.retryAfterMs).toBe(0)
        remaining.push(result.remaining)
      }
      expect(remaining).toEqual([2, 1, 0])
      const rejected = await limiter.limit('k')
      expect([rejected.allowed, rejected.remaining]).toEqual([false, 0])
      expect(rejected.retryAfterMs).toBeGreaterThan(0)
    })

    it('admits exactly `limit` unit requests, `remaining` never above what is left', async () => {
      const limiter = create(20)
      const sources = new Set<RateLimitSource>()
      for (let admitted = 1; admitted <= 20; admitted++) {
        const result = await limiter.limit('n')
        expect(result.allowed).toBe(true)
        sources.add(result.source)
        // leased mode: `remaining` is a lower bound (RateLimitResult.remaining, src/ratelimit/types.ts)
        if (mode === 'leased') expect(result.remaining).toBeLessThanOrEqual(20 - admitted)
        else expect(result.remaining).toBe(20 - admitted)
      }
      expect((await limiter.limit('n')).allowed).toBe(false)
      // leased mode answers from the slice in memory (`lease`) between its Redis calls
      expect(sources).toEqual(new Set(mode === 'leased' ? [source, 'lease'] : [source]))
    })

    it('takes weighted costs and consumes nothing for a rejected one', async () => {
      const limiter = create(10)
      expect((await limiter.limit('w', { cost: 4 })).remaining).toBe(6)
      expect((await limiter.limit('w', { cost: 4 })).remaining).toBe(2)
      const tooMuch = await limiter.limit('w', { cost: 3 })
      expect([tooMuch.allowed, tooMuch.remaining]).toEqual([false, 2])
      const rest = await limiter.limit('w', { cost: 2 })
      expect([rest.allowed, rest.remaining]).toEqual([true, 0])
    })

    it('rejects a cost that can never fit with retryAfterMs -1, consuming nothing', async () => {
      const limiter = create(5)
      const big = await limiter.limit('b', { cost: 6 })
      expect([big.allowed, big.retryAfterMs, big.remaining]).toEqual([false, -1, 5])
      expect((await limiter.limit('b', { cost: 5 })).allowed).toBe(true)
    })

    it('keeps keys apart', async () => {
      const limiter = create(1)
      expect((await limiter.limit('a')).allowed).toBe(true)
      expect((await limiter.limit('a')).allowed).toBe(false)
      expect((await limiter.limit('b')).allowed).toBe(true)
    })

    it('describes its decision: the policy, the limit, times in ms on one clock', async () => {
      const limiter = create(4)
      const before = Date.now()
      const result = await limiter.limit('d')
      expect(result.policy).toEqual(limiter.policy)
      expect(result.limit).toBe(4)
      // the deciding clock may be Redis': allow a little skew against this process's
      expect(Math.abs(result.nowMs - before)).toBeLessThan(5_000)
      expect(result.resetAtMs).toBeGreaterThan(result.nowMs)
      // a sliding window counter's units weigh on the next window too: restored within two windows
      expect(result.resetAtMs - result.nowMs).toBeLessThanOrEqual(2 * limiter.policy.windowMs)
    })

    it('refuses an empty key and a cost that is not an integer ≥ 1 (InvalidArgumentError)', async () => {
      const limiter = create(2)
      for (const call of [
        () => limiter.limit(''),
        () => limiter.limit('c', { cost: 0 }),
        () => limiter.limit('c', { cost: 1.5 }),
      ]) {
        expect(await raised(call)).toBeInstanceOf(InvalidArgumentError)
      }
      expect((await limiter.limit('c')).remaining).toBe(1)
    })
  })
}
