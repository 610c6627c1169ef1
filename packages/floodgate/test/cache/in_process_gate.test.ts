import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BloomFilter, type BloomGate, BloomReplica, createCache, KeySpace } from '../../src/index.js'
import { commandCalls, keyLookups } from '../support/command_stats.js'
import { chunks, range } from '../support/items.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// A private server: INFO commandstats counts this file's commands only.
let server: PrivateRedis
let redis: Redis

beforeAll(async () => {
  server = await PrivateRedis.start()
  redis = await privateRedisClient(server)
})

afterAll(async () => {
  redis.disconnect()
  await server.destroy()
})

/** Reads 1,000 absent ids at once through a cache gated by `gate`; Redis commands and key lookups, loads, keys left. */
async function burst(name: string, gate: BloomGate) {
  const cache = createCache<string>({ redis, name, bloom: gate, redisTimeoutMs: 1000 })
  await cache.ready
  let loads = 0
  await redis.config('RESETSTAT')
  const values = await Promise.all(
    range(0, 1_000, 'missing').map((id) =>
      cache.getOrLoad(id, async () => {
        loads++
        return 'found'
      }),
    ),
  )
  const lookups = await keyLookups(redis)
  const calls = await commandCalls(redis)
  delete calls.info
  const keys = (await redis.keys(`fg:c:${name}:*`)).length
  cache.close()
  return { values, calls, lookups, loads, keys }
}

/** A filter of `video:0..n-1` (1M bits) and its started replica. */
async function builtFilter(name: string, n: number) {
  const bloom = new BloomFilter({ redis, keySpace: new KeySpace('fg'), name, bits: 1_000_000, hashes: 7 })
  await bloom.rebuild(chunks(range(0, n, 'video'), n))
  const replica = new BloomReplica({ filter: bloom })
  await replica.start()
  return { bloom, replica }
}

describe('an in-process Bloom gate (BloomReplica) in front of the cache', () => {
  it('is asked before L2: 1,000 absent ids cost no L2 read and write no key (a remote gate: 1,000 key reads)', async () => {
    const { bloom, replica } = await builtFilter('v', 1_000)
    try {
      const remote = await burst('remote', bloom)
      const local = await burst('local', replica)
      console.log('1,000 absent ids', { remote: remote.calls, inProcess: local.calls })

      for (const run of [remote, local]) {
        expect(run.values.filter((v) => v === undefined).length).toBeGreaterThan(990)
        expect(run.loads).toBeLessThan(10) // false positives only
      }
      expect(remote.lookups).toBeGreaterThanOrEqual(1_000) // GETs, batched into MGETs
      expect((local.calls.get ?? 0) + (local.calls.mget ?? 0)).toBeLessThan(10) // false positives only
      expect(local.lookups).toBeLessThan(50) // those, and the replica's sync
      expect(local.calls.hmget).toBeLessThanOrEqual(3)
      expect(local.keys).toBeLessThan(10)
    } finally {
      replica.close()
    }
  })

  it('is asked before the MGET of getManyOrLoad, and while the L2 breaker is open', async () => {
    const { replica } = await builtFilter('w', 100)
    const cache = createCache<string>({ redis, name: 'many', bloom: replica, redisTimeoutMs: 1000 })
    await cache.ready
    const loaded: string[] = []
    const batchLoader = async (keys: string[]) => {
      loaded.push(...keys)
      return keys.map((key) => `v:${key}`)
    }
    try {
      await redis.config('RESETSTAT')
      const many = await cache.getManyOrLoad([...range(0, 500, 'missing'), 'video:1'], batchLoader)
      const calls = await commandCalls(redis)
      expect(many.get('video:1')).toBe('v:video:1')
      expect(loaded.filter((key) => key.startsWith('missing:')).length).toBeLessThan(5) // false positives only
      expect(calls.hmget).toBe(1) // one sync for the batch; the MGET carries only what passed the gate
      expect(calls.mget).toBe(1)

      for (let i = 0; i < 10 && cache.breaker.state === 'closed'; i++) cache.breaker.failure()
      expect(cache.breaker.state).toBe('open')
      loaded.length = 0
      const rejected = await Promise.all(
        range(500, 600, 'missing').map((id) => cache.getOrLoad(id, async () => 'x')),
      )
      expect(rejected.filter((v) => v === undefined).length).toBeGreaterThan(95)
    } finally {
      cache.close()
      replica.close()
    }
  })
})
