import { afterAll, describe, expect, it } from 'vitest'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, TEST_REDIS_URL, testRedisClient, uniquePrefix } from '../support/redis.js'

// Test 1: 4 processes × 16 concurrent callers fire 10,000 decisions at one key,
// limit 100 per 1 s window; the admitted Redis timestamps are checked against each
// algorithm's guarantee.
const WORKERS = 4
const PER_WORKER = 2500
const LIMIT = 100
const WINDOW_MS = 1000
const ALGORITHMS = ['slidingLog', 'fixedWindow', 'tokenBucket', 'gcra', 'slidingWindow'] as const

const redis = testRedisClient()
const prefix = uniquePrefix('rl-exact')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

interface Report {
  algorithm: string
  admitted: number[]
  fired: number
  fallbacks: number
}

/** Most admissions in any trailing window (x − windowMs, x]. */
function maxInTrailingWindow(sorted: readonly number[], windowMs: number): number {
  let best = 0
  let lo = 0
  for (let hi = 0; hi < sorted.length; hi++) {
    while (sorted[lo]! <= sorted[hi]! - windowMs) lo++
    let end = hi
    while (end + 1 < sorted.length && sorted[end + 1] === sorted[hi]) end++
    best = Math.max(best, end - lo + 1)
  }
  return best
}

/** Largest excess of admissions over burst + rate × elapsed, over every interval [a, b] of admissions. */
function worstBucketExcess(sorted: readonly number[], burst: number, ratePerMs: number): number {
  let worst = Number.NEGATIVE_INFINITY
  for (let i = 0; i < sorted.length; i++) {
    for (let j = i; j < sorted.length; j++) {
      worst = Math.max(worst, j - i + 1 - (burst + ratePerMs * (sorted[j]! - sorted[i]!)))
    }
  }
  return worst
}

describe('exactness under 4 processes', () => {
  it('never admits more than each algorithm allows', { timeout: 60_000 }, async () => {
    const workers = Array.from({ length: WORKERS }, () =>
      spawnWorker(new URL('./workers/fire.ts', import.meta.url), [
        TEST_REDIS_URL,
        prefix,
        String(WORKERS),
        String(PER_WORKER),
        '16',
        String(LIMIT),
        String(WINDOW_MS),
        ALGORITHMS.join(','),
      ]),
    )
    const codes = await Promise.all(workers.map((w) => w.exited))
    expect(codes).toEqual([0, 0, 0, 0])

    for (const algorithm of ALGORITHMS) {
      const reports = workers.flatMap((w) => w.messages as Report[]).filter((r) => r.algorithm === algorithm)
      expect(reports).toHaveLength(WORKERS)
      expect(reports.reduce((n, r) => n + r.fired, 0)).toBe(WORKERS * PER_WORKER)
      expect(reports.reduce((n, r) => n + r.fallbacks, 0)).toBe(0)
      const admitted = reports.flatMap((r) => r.admitted).sort((a, b) => a - b)
      const spanMs = admitted[admitted.length - 1]! - admitted[0]!
      // the limit was reached: more requests than the quota got through the first window
      expect(admitted.length).toBeGreaterThanOrEqual(LIMIT)
      const byWindow = new Map<number, number>()
      for (const t of admitted)
        byWindow.set(Math.floor(t / WINDOW_MS), (byWindow.get(Math.floor(t / WINDOW_MS)) ?? 0) + 1)
      const maxAligned = Math.max(...byWindow.values())
      const maxTrailing = maxInTrailingWindow(admitted, WINDOW_MS)

      switch (algorithm) {
        case 'slidingLog':
          expect(maxTrailing).toBe(LIMIT) // saturated, never over
          break
        case 'fixedWindow':
          expect(maxAligned).toBe(LIMIT)
          break
        case 'slidingWindow':
          // each aligned window's own count never exceeds the limit (estimate ≥ current count);
          // a trailing window stays under limit + previous × e / W < 2 × limit
          expect(maxAligned).toBeLessThanOrEqual(LIMIT)
          expect(maxTrailing).toBeLessThan(2 * LIMIT)
          break
        case 'tokenBucket':
        case 'gcra':
          expect(worstBucketExcess(admitted, LIMIT, LIMIT / WINDOW_MS)).toBeLessThanOrEqual(1e-6)
          expect(admitted.length).toBeLessThanOrEqual(LIMIT + Math.ceil((LIMIT * spanMs) / WINDOW_MS))
          break
      }
    }
  })
})
