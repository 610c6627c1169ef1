import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  createRateLimiter,
  createRedisClient,
  InvalidArgumentError,
  type RateLimitAlgorithm,
  type RateLimiterOptions,
  type RedisClient,
  type RedisRateLimiter,
} from '../../src/index.js'
import { commandCalls } from '../support/command_stats.js'
import {
  deadRedisClient,
  deleteByPrefix,
  TEST_REDIS_CLUSTER_NODES,
  TEST_REDIS_TARGET,
  testRedisClient,
  uniquePrefix,
} from '../support/redis.js'
import { PrivateRedis } from '../support/redis_server.js'

// The decisions (and lease calls) a limiter is asked for during one event-loop poll phase leave as
// one script call (`src/ratelimit/script_batch.ts`): counted here in script calls sent, with the
// answers checked against what calls in a row would have given.
const prefix = uniquePrefix('rl-batch')
const admin = testRedisClient()
let client: RedisClient

const ALGORITHMS: RateLimitAlgorithm[] = ['fixedWindow', 'slidingLog', 'slidingWindow', 'tokenBucket', 'gcra']

beforeAll(async () => {
  client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 5000 })
  await client.ping().catch(() => {}) // a cluster client learns its slots
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  // every script in Redis's script cache, so the counts below see no NOSCRIPT round (an EVAL more)
  const warm = [
    ...ALGORITHMS.map((algorithm) => limiterOn(client, { algorithm })),
    ...(['fixedWindow', 'slidingWindow'] as const).map((algorithm) =>
      limiterOn(client, { algorithm, mode: 'leased' }),
    ),
  ]
  await Promise.all(warm.map((limiter) => limiter.limit('warm')))
})

afterAll(async () => {
  client.disconnect()
  await deleteByPrefix(admin, prefix)
  admin.disconnect()
})

// Redis (not a fallback) must decide every call, even on a loaded machine.
const slowBoxSafe = { timeoutMs: 5000, fallback: 'failClosed' } as const

let names = 0
const limiterOn = (redis: RedisClient, options: Partial<RateLimiterOptions> = {}): RedisRateLimiter =>
  createRateLimiter({
    redis,
    prefix,
    name: `l${names++}`,
    algorithm: 'fixedWindow',
    limit: 10,
    windowMs: 60_000,
    ...slowBoxSafe,
    ...options,
  })

/** The script calls (EVALSHA or EVAL) `redis` is asked to send until `stop()`, with their key counts. */
function recordScriptCalls(redis: RedisClient) {
  const send = vi.spyOn(redis as Redis, 'sendCommand')
  const calls = () =>
    send.mock.calls
      .map(([command]) => command as unknown as { name: string; args: unknown[] })
      .filter((c) => c.name === 'evalsha' || c.name === 'eval')
      .map((c) => Number(c.args[1]))
  return { calls, stop: () => send.mockRestore() }
}

describe.skipIf(TEST_REDIS_CLUSTER_NODES)('decisions of one poll phase, single node', () => {
  it.each(ALGORITHMS)('%s: one script call decides them, in order, exactly', async (algorithm) => {
    const limiter = limiterOn(client, { algorithm, burst: 10 })
    const sent = recordScriptCalls(client)
    try {
      // 12 on one key (limit 10) between 4 other keys: as 16 calls in a row would answer
      const keys = ['a', 'x', 'a', 'y', ...Array(10).fill('a'), 'z', 'w']
      const decisions = keys.map((key) => limiter.limit(key))
      expect(sent.calls()).toEqual([]) // nothing leaves before the poll phase ends
      const results = await Promise.all(decisions)
      expect(sent.calls()).toHaveLength(1)
      const onA = results.filter((_, i) => keys[i] === 'a')
      expect(onA.map((r) => r.allowed)).toEqual([...Array(10).fill(true), false, false])
      expect(onA.slice(0, 10).map((r) => r.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0])
      expect(onA[10]!.retryAfterMs).toBeGreaterThan(0)
      expect(results.filter((_, i) => keys[i] !== 'a').every((r) => r.allowed && r.remaining === 9)).toBe(
        true,
      )
      expect(new Set(results.map((r) => r.nowMs)).size).toBe(1) // one Redis TIME
      expect(results.every((r) => r.source === 'redis')).toBe(true)
    } finally {
      sent.stop()
    }
  })

  it('sends a full batch at once and the rest when the poll phase ends; batchMaxKeys 1 sends each', async () => {
    const batched = limiterOn(client, { batchMaxKeys: 4, limit: 100 })
    const sent = recordScriptCalls(client)
    try {
      const decisions = Array.from({ length: 10 }, (_, i) => batched.limit(`k${i}`))
      expect(sent.calls()).toEqual([4, 4]) // two full batches left at once
      await Promise.all(decisions)
      expect(sent.calls()).toEqual([4, 4, 2])
      const single = limiterOn(client, { batchMaxKeys: 1 })
      const alone = Array.from({ length: 3 }, () => single.limit('one'))
      expect(sent.calls()).toEqual([4, 4, 2, 1, 1, 1])
      expect((await Promise.all(alone)).map((r) => r.remaining)).toEqual([9, 8, 7])
    } finally {
      sent.stop()
    }
    expect(() => limiterOn(client, { batchMaxKeys: 0 })).toThrow(InvalidArgumentError)
  })

  it('keeps the keys of each limiter to its own script call (two limiters, two calls)', async () => {
    const [one, two] = [limiterOn(client), limiterOn(client, { algorithm: 'gcra' })]
    const sent = recordScriptCalls(client)
    try {
      await Promise.all([one.limit('a'), two.limit('a'), one.limit('b'), two.limit('b')])
      expect(sent.calls()).toEqual([2, 2])
    } finally {
      sent.stop()
    }
  })

  it('sends the queued decisions before a reset or a peek of the same limiter', async () => {
    const limiter = limiterOn(client)
    const before = Array.from({ length: 10 }, () => limiter.limit('r'))
    await limiter.reset('r') // the 10 decisions asked first count before the reset
    expect((await Promise.all(before)).every((r) => r.allowed)).toBe(true)
    expect((await limiter.peek('r')).remaining).toBe(10)
    const more = Array.from({ length: 4 }, () => limiter.limit('r'))
    expect((await limiter.peek('r')).remaining).toBe(6) // the 4 asked before the peek are counted in it
    expect((await Promise.all(more)).map((r) => r.remaining)).toEqual([9, 8, 7, 6])
  })

  it('fails only the decision whose listener threw, not the rest of its batch', async () => {
    const limiter = limiterOn(client)
    limiter.events.on('decision', ({ key }) => {
      if (key === 'bad') throw new Error('listener broke')
    })
    const outcomes = await Promise.allSettled(['a', 'bad', 'b'].map((key) => limiter.limit(key)))
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  })

  it('answers every decision of a failed batch from the fallback, each reported', async () => {
    const dead = deadRedisClient()
    const limiter = limiterOn(dead, { fallback: 'failOpen', startupWaitMs: 1 })
    const fallbacks: string[] = []
    limiter.events.on('fallback', ({ key }) => fallbacks.push(key))
    const results = await Promise.all(['a', 'b', 'c'].map((key) => limiter.limit(key)))
    expect(results.map((r) => [r.allowed, r.source])).toEqual(Array(3).fill([true, 'failOpen']))
    expect(fallbacks.sort()).toEqual(['a', 'b', 'c']) // the start-up wait may let them go in another order
  })

  it('leased mode: the lease calls of one poll phase are one script call', async () => {
    const limiter = limiterOn(client, { mode: 'leased', limit: 100 })
    const sent = recordScriptCalls(client)
    try {
      const first = await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.limit(`k${i}`)))
      expect(first.map((r) => r.source)).toEqual(Array(20).fill('redis'))
      expect(sent.calls()).toEqual([40]) // 20 lease calls, 2 keys each (counter, grants)
      const fromSlices = await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.limit(`k${i}`)))
      expect(fromSlices.map((r) => r.source)).toEqual(Array(20).fill('lease'))
      expect(await limiter.release()).toBe(20 * 23) // slices of 25, 2 units spent each
      expect(sent.calls()).toEqual([40, 40]) // the 20 give-backs: one call
    } finally {
      sent.stop()
    }
  })
})

describe.skipIf(TEST_REDIS_CLUSTER_NODES)('script calls on the server', () => {
  let server: PrivateRedis
  let redis: RedisClient

  beforeAll(async () => {
    server = await PrivateRedis.start()
    redis = createRedisClient(server.url, { commandTimeoutMs: 5000 })
    await new Promise((resolve) => redis.once('ready', resolve))
  })

  afterAll(async () => {
    redis.disconnect()
    await server.destroy()
  })

  it('64 concurrent decisions cost Redis one EVALSHA and one TIME; after SCRIPT FLUSH one EVAL more', async () => {
    const limiter = limiterOn(redis, { algorithm: 'slidingWindow', limit: 1000 })
    await limiter.limit('warm')
    await (redis as Redis).config('RESETSTAT')
    const decide = () => Promise.all(Array.from({ length: 64 }, (_, i) => limiter.limit(`k${i % 8}`)))
    expect((await decide()).every((r) => r.allowed && r.source === 'redis')).toBe(true)
    expect(await commandCalls(redis as Redis)).toMatchObject({ evalsha: 1, time: 1 })
    await (redis as Redis).script('FLUSH')
    await (redis as Redis).config('RESETSTAT')
    expect((await decide()).every((r) => r.allowed && r.source === 'redis')).toBe(true)
    const calls = await commandCalls(redis as Redis)
    expect([calls.evalsha, calls.eval]).toEqual([1, 1]) // the batch got NOSCRIPT, then one EVAL
  })
})

describe.skipIf(!TEST_REDIS_CLUSTER_NODES)('decisions of one poll phase, Redis Cluster', () => {
  it('batch per limiter key: a script call never spans slots', async () => {
    const limiter = limiterOn(client)
    const sent = recordScriptCalls(client)
    try {
      const keys = ['a', 'b', 'a', 'c', 'a', 'b']
      const results = await Promise.all(keys.map((key) => limiter.limit(key)))
      expect(sent.calls().sort()).toEqual([1, 2, 3]) // c; b, b; a, a, a
      expect(results.map((r) => r.remaining)).toEqual([9, 9, 8, 9, 7, 8])
    } finally {
      sent.stop()
    }
  })
})
