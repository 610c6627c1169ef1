import { afterAll, describe, expect, it } from 'vitest'
import { CountsReader, Interactions, playViewer } from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { PrivateRedis } from '../support/redis_server.js'

const redis = testRedisClient()
const prefix = uniquePrefix('counts')
const interactions = new Interactions(redis, { prefix, partitions: 4 })
const reader = new CountsReader({ redis, prefix, partitions: 4, timeoutMs: 2000 })

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('CountsReader.readCounts', () => {
  it('reads counts and the viewer flags for a page in one round trip', async () => {
    await redis.set(interactions.keys.epoch(), 'e1')
    await interactions.setLiked('1', '10', true)
    await interactions.setLiked('1', '11', true)
    await interactions.setFavorited('1', '11', true)
    await interactions.setLiked('2', '10', true)
    await interactions.recordPlay('2', playViewer({ userId: '10' }))
    // Spy: every method called on the client, and the size of each pipeline.
    const calls: string[] = []
    const pipelines: { length: number }[] = []
    const spy = new Proxy(redis, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          calls.push(String(prop))
          const result = value.apply(target, args)
          if (prop === 'pipeline') pipelines.push(result)
          return result
        }
      },
    })
    const spied = new CountsReader({ redis: spy, prefix, partitions: 4, timeoutMs: 2000 })
    await reader.readCounts(['1'], '11') // this process's first read with a viewer loads the flags script first
    const read = await spied.readCounts(['1', '2', '3'], '11')
    expect(read.ok).toBe(true)
    if (!read.ok) return
    expect(read.counts.get('1')).toEqual({ likes: 2, favorites: 1, plays: 0, liked: true, favorited: true })
    expect(read.counts.get('2')).toEqual({ likes: 1, favorites: 0, plays: 1, liked: false, favorited: false })
    expect(read.counts.get('3')).toEqual({ likes: 0, favorites: 0, plays: 0, liked: false, favorited: false })
    const anonymous = await reader.readCounts(['1'])
    expect(anonymous.ok && anonymous.counts.get('1')).toEqual({ likes: 2, favorites: 1, plays: 0 })
    // One round trip: GET epoch + 6 commands per video (HGET + SCARD per kind, GET plays, the
    // flags script), nothing else. On a single node that is
    // one pipeline; on a cluster one pipeline per hash tag (the epoch's, each video's), sent at once.
    if (redis.isCluster) {
      expect(calls.length).toBeGreaterThan(0)
      expect(calls.length).toBeLessThanOrEqual(4)
      expect(calls.every((call) => call === 'pipeline')).toBe(true)
    } else expect(calls).toEqual(['pipeline'])
    expect(pipelines.reduce((sum, p) => sum + p.length, 0)).toBe(19)
  })

  it('answers epoch-missing when Redis lost its data, and tells the recovery side', async () => {
    await redis.del(interactions.keys.epoch())
    let told = 0
    const watched = new CountsReader({
      redis,
      prefix,
      partitions: 4,
      recovery: { serving: () => true, notifyEpochMissing: () => void told++ },
    })
    expect(await watched.readCounts(['1'])).toEqual({ ok: false, reason: 'epoch-missing' })
    expect(told).toBe(1)
    const rebuilding = new CountsReader({
      redis,
      prefix,
      recovery: { serving: () => false, notifyEpochMissing: () => undefined },
    })
    expect(await rebuilding.readCounts(['1'])).toEqual({ ok: false, reason: 'rebuilding' })
  })

  it('answers redis-error (never throws) when Redis is down', async () => {
    const server = await PrivateRedis.start()
    const client = new (await import('ioredis')).Redis(server.url, {
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      lazyConnect: true,
    })
    client.on('error', () => undefined)
    try {
      await client.connect()
      await client.set(`${prefix}:epoch:v2`, 'x')
      const down = new CountsReader({ redis: client, prefix, timeoutMs: 500 })
      expect((await down.readCounts(['1'])).ok).toBe(true)
      await server.kill()
      const read = await down.readCounts(['1', '2'], '5')
      expect(read.ok).toBe(false)
      expect(!read.ok && ['redis-error', 'timeout']).toContain(!read.ok && read.reason)
    } finally {
      client.disconnect()
      await server.destroy()
    }
  })

  it('rejects ids that are not positive integers', async () => {
    await expect(reader.readCounts(['abc'])).rejects.toThrow(/itemIds/)
  })
})
