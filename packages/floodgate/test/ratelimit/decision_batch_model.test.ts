import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRateLimiter,
  createRedisClient,
  type RateLimitAlgorithm,
  type RedisClient,
} from '../../src/index.js'
import { prng } from '../support/prng.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'

// Property: the decisions asked in one poll phase, batched into script calls (`script_batch.ts`,
// `includes/decide-each.lua`) with many repeats of one key, answer each caller exactly what the
// same calls in a row would. The model: with windows of ~11.6 days (windowMs 1e9) nothing refills
// or expires during the test, so every algorithm admits `cost` iff used + cost ≤ its budget (the
// limit; burst for tokenBucket and gcra), a rejection consumes nothing, remaining = budget − used.
const prefix = uniquePrefix('rl-batch-model')
const admin = testRedisClient()
let client: RedisClient

const ALGORITHMS: RateLimitAlgorithm[] = ['fixedWindow', 'slidingLog', 'slidingWindow', 'tokenBucket', 'gcra']
const LIMIT = 10
const BURST = 6
const KEYS = ['a', 'a', 'a', 'b', 'c'] // 'a' three times as likely: long runs of one key in a batch

beforeAll(async () => {
  // 5 s, not the 2 s default: the test checks answers, not timing, and a shared box can stall a
  // call past 2 s (the limiters below raise their 50 ms decision deadline to match, failClosed)
  client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 5000 })
  await client.ping().catch(() => {}) // a cluster client learns its slots
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
})

afterAll(async () => {
  client.disconnect()
  await deleteByPrefix(admin, prefix)
  admin.disconnect()
})

/** What the model expects of one decision: `retry` 0 admitted, 'later' > 0, -1 never fits. */
interface Expected {
  key: string
  cost: number
  allowed: boolean
  remaining: number
  retry: 0 | 'later' | -1
}

describe('batched decisions against a model of calls in a row', () => {
  it.each(ALGORITHMS)('%s: random batches with repeats of one key', async (algorithm) => {
    const budget = algorithm === 'tokenBucket' || algorithm === 'gcra' ? BURST : LIMIT
    for (const seed of [1, 2, 3]) {
      const random = prng(seed)
      const limiter = createRateLimiter({
        redis: client,
        prefix,
        name: `${algorithm}-${seed}`,
        algorithm,
        limit: LIMIT,
        burst: BURST,
        windowMs: 1e9,
        // full batches leave while the poll phase still adds to the next one
        batchMaxKeys: 1 + Math.floor(random() * 8),
        // 5 s, not the 50 ms default: past the deadline a decision is a fallback answer, which a
        // model of Redis's answers cannot predict; the default is exercised by the outage tests
        timeoutMs: 5000,
        fallback: 'failClosed', // a fallback answer would not match the model
      })
      const used = new Map<string, number>()
      for (let round = 0; round < 12; round++) {
        const asked = Array.from({ length: 1 + Math.floor(random() * 24) }, () => ({
          key: KEYS[Math.floor(random() * KEYS.length)]!,
          cost: random() < 0.08 ? budget + 1 : 1 + Math.floor(random() * 3),
        }))
        const results = await Promise.all(asked.map(({ key, cost }) => limiter.limit(key, { cost })))
        const expected = asked.map(({ key, cost }): Expected => {
          const before = used.get(key) ?? 0
          const allowed = before + cost <= budget
          if (allowed) used.set(key, before + cost)
          const retry = allowed ? 0 : cost > budget ? -1 : 'later'
          return { key, cost, allowed, remaining: budget - (used.get(key) ?? 0), retry }
        })
        const answered = results.map(
          (r, i): Expected => ({
            key: asked[i]!.key,
            cost: asked[i]!.cost,
            allowed: r.allowed,
            remaining: r.remaining,
            retry: r.retryAfterMs > 0 ? 'later' : (r.retryAfterMs as 0 | -1),
          }),
        )
        expect(results.every((r) => r.source === 'redis')).toBe(true)
        expect(answered, `seed ${seed}, round ${round}`).toEqual(expected)
      }
    }
  })
})
