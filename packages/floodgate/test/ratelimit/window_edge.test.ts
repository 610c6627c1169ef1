import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { createRateLimiter, type RateLimitAlgorithm } from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// Test 2: a burst just before a window edge and another just after it, timed on the
// Redis clock. Fixed window admits 2 × limit across the edge, sliding log never more
// than the limit in any trailing window, sliding window counter stays within its
// stated bound: limit + previous × e / W in the trailing window ending e ms into the window.
const LIMIT = 50
const WINDOW_MS = 1000
const BEFORE_EDGE_MS = 250
const AFTER_EDGE_MS = 150

const redis = testRedisClient()
const prefix = uniquePrefix('rl-edge')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

async function redisNowMs(): Promise<number> {
  const [s, us] = await redis.time()
  return Number(s) * 1000 + Math.floor(Number(us) / 1000)
}

/** Fires two bursts of 2 × limit around the next window edge; returns the admitted Redis times and the edge. */
async function burstAcrossEdge(algorithm: RateLimitAlgorithm) {
  const limiter = createRateLimiter({
    redis,
    prefix,
    algorithm,
    limit: LIMIT,
    windowMs: WINDOW_MS,
    timeoutMs: 2000,
    fallback: 'failClosed',
  })
  let now = await redisNowMs()
  let edge = Math.ceil(now / WINDOW_MS) * WINDOW_MS
  if (edge - now < BEFORE_EDGE_MS + 50) edge += WINDOW_MS
  await sleep(edge - BEFORE_EDGE_MS - now)
  const fire = async () => {
    const results = await Promise.all(Array.from({ length: 2 * LIMIT }, () => limiter.limit('edge')))
    expect(results.every((r) => r.source === 'redis')).toBe(true)
    return results.filter((r) => r.allowed).map((r) => r.nowMs)
  }
  const before = await fire()
  now = await redisNowMs()
  await sleep(edge + AFTER_EDGE_MS - now)
  const after = await fire()
  // the bursts landed where intended
  expect(Math.max(...before)).toBeLessThan(edge)
  expect(Math.min(...after)).toBeGreaterThanOrEqual(edge)
  return { before, after, edge }
}

describe('window edge', () => {
  it('fixed window admits 2 × limit within less than one window across the edge', async () => {
    const { before, after } = await burstAcrossEdge('fixedWindow')
    expect(before).toHaveLength(LIMIT)
    expect(after).toHaveLength(LIMIT)
    const all = [...before, ...after]
    expect(Math.max(...all) - Math.min(...all)).toBeLessThan(WINDOW_MS)
  })

  it('sliding log admits nothing after the edge while the first burst is in the trailing window', async () => {
    const { before, after } = await burstAcrossEdge('slidingLog')
    expect(before).toHaveLength(LIMIT)
    expect(after).toHaveLength(0)
  })

  it('sliding window counter admits at most limit × e / W after the edge', async () => {
    const { before, after, edge } = await burstAcrossEdge('slidingWindow')
    expect(before).toHaveLength(LIMIT)
    const e = Math.max(...after) - edge
    // estimate = 50 × (W − e) / W + current ≤ 50  ⇒  current ≤ 50 × e / W
    expect(after.length).toBeLessThanOrEqual(Math.floor((LIMIT * e) / WINDOW_MS))
    expect(after.length).toBeGreaterThanOrEqual(Math.floor((LIMIT * AFTER_EDGE_MS) / WINDOW_MS))
    expect(before.length + after.length).toBeLessThanOrEqual(LIMIT * (1 + e / WINDOW_MS) + 1e-9)
    expect(before.length + after.length).toBeLessThan(2 * LIMIT)
  })
})
