import { afterAll } from 'vitest'
import {
  createMemoryRateLimiter,
  createRateLimiter,
  KeySpace,
  RATE_LIMIT_ALGORITHMS,
} from '../../src/index.js'
import { LEASED_ALGORITHMS } from '../../src/ratelimit/lease/lease_script.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { rateLimiterContract } from './contract/rate_limiter_contract.js'

// One registration per RateLimiter implementation: the five Redis algorithms (exact mode), the
// leased mode's window algorithms, and the in-memory ones.
const redis = testRedisClient()
const keySpace = new KeySpace(uniquePrefix('rl-contract'))
let instance = 0

afterAll(async () => {
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
})

for (const algorithm of RATE_LIMIT_ALGORITHMS) {
  rateLimiterContract({
    name: `redis ${algorithm}`,
    source: 'redis',
    create: (limit) =>
      createRateLimiter({
        redis,
        prefix: keySpace,
        algorithm,
        name: `${algorithm}-${instance++}`,
        limit,
        windowMs: 60_000,
        // 2 s instead of the default request-path deadline: the test machine is shared and busy
        timeoutMs: 2000,
        // a store failure must fail the test, not answer from a fallback
        fallback: 'failClosed',
      }),
  })
}

for (const algorithm of LEASED_ALGORITHMS) {
  rateLimiterContract({
    name: `redis ${algorithm} leased`,
    source: 'redis',
    mode: 'leased',
    create: (limit) =>
      createRateLimiter({
        redis,
        prefix: keySpace,
        algorithm,
        mode: 'leased',
        name: `${algorithm}-leased-${instance++}`,
        limit,
        windowMs: 60_000,
        timeoutMs: 2000,
        fallback: 'failClosed',
      }),
  })
}

for (const algorithm of ['slidingWindow', 'tokenBucket'] as const) {
  rateLimiterContract({
    name: `memory ${algorithm}`,
    source: 'memory',
    create: (limit) =>
      createMemoryRateLimiter({ algorithm, name: `${algorithm}-${instance++}`, limit, windowMs: 60_000 }),
  })
}
