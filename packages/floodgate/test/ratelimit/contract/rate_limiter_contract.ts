import { describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  type LimitOptions,
  type RateLimiter,
  type RateLimitResult,
  type RateLimitSource,
} from '../../../src/index.js'

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
 * How a limiter calls `limitLocal` first and `limit` only when it answered undefined (the way a
 * hot path uses it); records whether each answer came from memory.
 */
function localFirst(limiter: RateLimiter) {
  const fromMemory: boolean[] = []
  const decide = async (key: string, options?: LimitOptions): Promise<RateLimitResult> => {
    const local = limiter.limitLocal(key, options)
    fromMemory.push(local !== undefined)
    return local ?? limiter.limit(key, options)
  }
  return { decide, fromMemory }
}

/**
 * The behaviour every `RateLimiter` promises, whatever its algorithm and store (bentocache's
 * driver test suite is the model: one suite, one registration per implementation).
 */
export function rateLimiterContract(registration: RateLimiterRegistration): void {
  const { name, source, create, mode = 'exact' } = registration
  // what `limitLocal` may answer: an in-memory limiter everything; a Redis one only from what it
  // holds (a leased slice, a remembered refusal), so never a key it has not asked Redis about
  const inMemory = source === 'memory'

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

    it('limitLocal then limit: the decisions and consumption of limit alone', async () => {
      const limiter = create(20)
      const { decide, fromMemory } = localFirst(limiter)
      for (let admitted = 1; admitted <= 20; admitted++) {
        const result = await decide('l')
        expect(result.allowed).toBe(true)
        if (mode === 'leased') expect(result.remaining).toBeLessThanOrEqual(20 - admitted)
        else expect(result.remaining).toBe(20 - admitted)
      }
      const refused = await decide('l')
      expect([refused.allowed, refused.remaining]).toEqual([false, 0])
      expect(refused.retryAfterMs).toBeGreaterThan(0)
      expect((await limiter.limit('l')).allowed).toBe(false)
      // a fresh key is never answered from a Redis limiter's memory; its slices are, in leased mode
      expect(fromMemory[0]).toBe(inMemory)
      if (inMemory) expect(fromMemory.every(Boolean)).toBe(true)
      else if (mode === 'exact') expect(fromMemory.some(Boolean)).toBe(false)
      else expect(fromMemory.filter(Boolean).length).toBeGreaterThan(10)
    })

    it('limitLocal consumes nothing when it answers undefined, nor for a rejected cost', async () => {
      const limiter = create(10)
      for (let i = 0; i < 5; i++) {
        const local = limiter.limitLocal('u')
        if (!inMemory) expect(local).toBeUndefined()
        else expect(local?.remaining).toBe(9 - i)
      }
      const { decide, fromMemory } = localFirst(limiter)
      // leased: a slice of the quota left after the first unit; the cost below is more than it holds
      const first = await decide('v')
      expect([first.allowed, first.remaining]).toEqual([true, 9])
      const big = await decide('v', { cost: 9 })
      expect([big.allowed, big.remaining]).toEqual([true, 0])
      expect(fromMemory).toEqual([inMemory, inMemory])
      const over = limiter.limitLocal('v', { cost: 2 })
      if (inMemory) expect([over?.allowed, over?.remaining]).toEqual([false, 0])
      else expect(over).toBeUndefined()
      const rejected = await decide('w', { cost: 11 })
      expect([rejected.allowed, rejected.retryAfterMs, rejected.remaining]).toEqual([false, -1, 10])
      expect((await decide('w', { cost: 10 })).allowed).toBe(true)
      if (!inMemory) expect((await limiter.limit('u')).remaining).toBe(9)
    })

    it('refuses an empty key and a cost that is not an integer ≥ 1 (InvalidArgumentError)', async () => {
      const limiter = create(2)
      const bad: [string, LimitOptions?][] = [[''], ['c', { cost: 0 }], ['c', { cost: 1.5 }]]
      for (const [key, options] of bad) {
        expect(await raised(() => limiter.limit(key, options))).toBeInstanceOf(InvalidArgumentError)
        // limitLocal throws synchronously: it has no promise to reject
        expect(() => limiter.limitLocal(key, options)).toThrow(InvalidArgumentError)
      }
      expect((await limiter.limit('c')).remaining).toBe(1)
    })
  })
}
