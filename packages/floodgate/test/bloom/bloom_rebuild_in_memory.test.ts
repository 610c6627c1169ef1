import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BloomFilter, BloomRebuildError, KeySpace } from '../../src/index.js'
import { commandCalls } from '../support/command_stats.js'
import { chunks, range } from '../support/items.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// A private server: INFO commandstats counts this file's commands only.
let server: PrivateRedis
let redis: Redis
const keySpace = new KeySpace('fg')
let n = 0

beforeAll(async () => {
  server = await PrivateRedis.start()
  redis = await privateRedisClient(server)
})

afterAll(async () => {
  redis.disconnect()
  await server.destroy()
})

const filter = (options: { rebuildBufferMaxBytes?: number } = {}) =>
  new BloomFilter({ redis, keySpace, name: `m${n++}`, bits: 300_000, hashes: 7, shards: 3, ...options })

describe('Bloom rebuild in process memory', () => {
  it('writes each shard once whatever the item count, with the same bits as a chunk-by-chunk rebuild', async () => {
    const items = range(0, 20_000, 'video')
    const inMemory = filter()
    const chunked = filter({ rebuildBufferMaxBytes: 0 })

    await redis.config('RESETSTAT')
    const built = await inMemory.rebuild(chunks(items, 5000))
    const inMemoryCalls = await commandCalls(redis)
    await redis.config('RESETSTAT')
    const reference = await chunked.rebuild(chunks(items, 5000))
    const chunkedCalls = await commandCalls(redis)

    // chunk by chunk: k SETBITs per item run in add-1.lua; in memory: the shards' pre-allocation only
    expect(chunkedCalls.setbit).toBeGreaterThanOrEqual(items.length * 7)
    expect(inMemoryCalls.setbit).toBe(3)
    expect(inMemoryCalls.bitop).toBe(3)
    const sent = Object.values(inMemoryCalls).reduce((a, b) => a + b, 0)
    expect(sent).toBeLessThan(60)

    const mine = inMemory.keys(built.generation).shards
    const theirs = chunked.keys(reference.generation).shards
    for (let shard = 0; shard < 3; shard++) {
      const bits = await redis.getBuffer(mine[shard]!)
      expect(bits?.length).toBe(100_000 / 8)
      expect(bits?.equals((await redis.getBuffer(theirs[shard]!))!)).toBe(true)
    }
    expect((await inMemory.mightContain(items)).every(Boolean)).toBe(true)
    expect(await redis.keys('*:staged')).toEqual([])
  })

  it('keeps what add wrote to the building generation meanwhile (the merge ORs, never overwrites)', async () => {
    const bloom = filter()
    await bloom.rebuild(chunks(['first'], 1))
    const late = range(0, 200, 'late')
    async function* source(): AsyncIterable<string[]> {
      yield range(0, 1000, 'old')
      await bloom.add(late) // lands in `ready` and in the generation being built
      yield range(1000, 2000, 'old')
    }
    await bloom.rebuild(source())
    expect((await bloom.mightContain(late)).every(Boolean)).toBe(true)
    expect((await bloom.mightContain(range(0, 2000, 'old'))).every(Boolean)).toBe(true)
    expect(await bloom.mightContainOne('first')).toBe(false) // not in the new source (k=7: FP ≈ 0)
  })

  it('fails without re-creating a shard key that vanished mid-rebuild (Redis lost its data)', async () => {
    const bloom = filter()
    async function* source(): AsyncIterable<string[]> {
      yield range(0, 500, 'x')
      await redis.flushall()
    }
    const error = await bloom.rebuild(source()).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BloomRebuildError)
    expect((error as Error).message).toMatch(/vanished/)
    expect(await redis.dbsize()).toBe(0) // no shard, no staged bitmap, no lock left
  })

  it('rejects a negative rebuildBufferMaxBytes', () => {
    expect(() => filter({ rebuildBufferMaxBytes: -1 })).toThrow(/rebuildBufferMaxBytes/)
  })
})
