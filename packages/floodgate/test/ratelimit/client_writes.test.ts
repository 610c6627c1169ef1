import type { Socket } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { createRateLimiter, createRedisClient, type RedisClient } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_URL, testRedis, uniquePrefix } from '../support/redis.js'

// floodgate leaves the caller's socket alone; batching comes from the client's own auto-pipelining.
const prefix = uniquePrefix('rl-writes')
const plain = testRedis()
const autoPipelined = createRedisClient(TEST_REDIS_URL, {
  commandTimeoutMs: 2000,
  redis: { enableAutoPipelining: true },
})

afterAll(async () => {
  await deleteByPrefix(plain, prefix)
  plain.disconnect()
  autoPipelined.disconnect()
})

// Redis (not a fallback) must decide every call, even on a loaded machine.
const slowBoxSafe = { timeoutMs: 2000, fallback: 'failClosed' } as const

/** Counts the socket's writes (`_write` per chunk, `_writev` per batch) and `cork()` calls. */
function watch(socket: Socket): { writes: number; corks: number } {
  const counts = { writes: 0, corks: 0 }
  const internals = socket as unknown as Record<'_write' | '_writev' | 'cork', (...args: unknown[]) => void>
  for (const method of ['_write', '_writev', 'cork'] as const) {
    const original = internals[method]
    internals[method] = function (this: Socket, ...args: unknown[]) {
      if (method === 'cork') counts.corks++
      else counts.writes++
      return original.apply(this, args)
    }
  }
  return counts
}

/** The writes made until every call `fire()` started was answered. */
async function writesOf<T>(client: RedisClient, fire: () => Promise<T>) {
  const counts = watch((client as unknown as { stream: Socket }).stream)
  const results = await fire()
  return { ...counts, results }
}

describe.skipIf(process.env.FLOODGATE_TEST_REDIS_CLUSTER)('rate limiter socket writes', () => {
  const limiter = (redis: RedisClient, name: string) =>
    createRateLimiter({
      redis,
      prefix,
      name,
      algorithm: 'slidingLog',
      limit: 10,
      windowMs: 60_000,
      ...slowBoxSafe,
    })

  it('never corks the caller’s socket', async () => {
    await plain.ping()
    const rl = limiter(plain, 'plain')
    const { corks, results } = await writesOf(plain, () =>
      Promise.all(Array.from({ length: 16 }, () => rl.limit('one-key'))),
    )
    expect(corks).toBe(0)
    expect(results.every((r) => r.source === 'redis')).toBe(true)
    expect(results.filter((r) => r.allowed)).toHaveLength(10)
  })

  it('sends the decisions of one tick in one write on an auto-pipelined client, exactly', async () => {
    await autoPipelined.ping()
    const rl = limiter(autoPipelined, 'auto')
    const { writes, corks, results } = await writesOf(autoPipelined, () =>
      Promise.all(Array.from({ length: 16 }, () => rl.limit('one-key'))),
    )
    expect({ writes, corks }).toEqual({ writes: 1, corks: 0 })
    expect(results.every((r) => r.source === 'redis')).toBe(true)
    expect(results.filter((r) => r.allowed)).toHaveLength(10)
  })
})
