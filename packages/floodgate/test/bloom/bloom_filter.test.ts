import { afterAll, describe, expect, it } from 'vitest'
import {
  type BloomFailOpenEvent,
  BloomFilter,
  BloomRebuildError,
  bloomSize,
  expectedFalsePositiveRate,
  KeySpace,
  LockTimeoutError,
  Mutex,
} from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const keySpace = new KeySpace(uniquePrefix('bloom'))
let n = 0
const filter = (options: Partial<ConstructorParameters<typeof BloomFilter>[0]> = {}) =>
  new BloomFilter({
    redis,
    keySpace,
    name: `f${n++}`,
    expectedItems: 1000,
    falsePositiveRate: 0.01,
    ...options,
  })

async function* chunks(items: readonly string[], size: number): AsyncIterable<string[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}
const range = (from: number, to: number, label: string) =>
  Array.from({ length: to - from }, (_, i) => `${label}:${from + i}`)

afterAll(async () => {
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
})

describe('BloomFilter on Redis', () => {
  it.each([1, 3])(
    'measured false-positive rate matches (1 − e^(−kn/m))^k at n/4, n/2, n (n = 20k, p = 0.01, shards = %i)',
    async (shards) => {
      const size = bloomSize(20_000, 0.01)
      const bloom = filter({ expectedItems: 20_000, falsePositiveRate: 0.01, shards })
      await bloom.rebuild(chunks([], 1))
      const probes = range(0, 20_000, 'absent')
      let added = 0
      for (const level of [5_000, 10_000, 20_000]) {
        await bloom.add(range(added, level, 'present'))
        added = level
        const answers = await bloom.mightContain(probes)
        const measured = answers.filter(Boolean).length / probes.length
        const expected = expectedFalsePositiveRate(bloom.bits, size.hashes, level)
        const sigma = Math.sqrt((expected * (1 - expected)) / probes.length)
        expect(Math.abs(measured - expected)).toBeLessThanOrEqual(4 * sigma + 2 / probes.length)
      }
      // no false negatives, ever
      const present = await bloom.mightContain(range(0, 20_000, 'present'))
      expect(present.every(Boolean)).toBe(true)
    },
  )

  it('answers "maybe" (and emits failOpen) while never built', async () => {
    const bloom = filter()
    const events: BloomFailOpenEvent[] = []
    bloom.on('failOpen', (e) => events.push(e))
    expect(await bloom.isReady()).toBe(false)
    expect(await bloom.mightContain(['a', 'b'])).toEqual([true, true])
    expect(events).toEqual([{ reason: 'not-ready', items: 2 }])
    expect(bloom.stats.failOpenNotReady).toBe(1)
    await bloom.add(['a']) // a filter never built ignores adds
  })

  it('a filter built by another instance is seen at once (a cached "not ready" is re-read)', async () => {
    const name = `f${n++}`
    const reader = new BloomFilter({ redis, keySpace, name, bits: 4096, hashes: 3 })
    expect(await reader.mightContainOne('x')).toBe(true)
    const builder = new BloomFilter({ redis, keySpace, name, bits: 4096, hashes: 3 })
    await builder.rebuild(chunks(['y'], 10))
    expect(await reader.mightContain(['x', 'y'])).toEqual([false, true])
  })

  it('splits the bits over shard keys with distinct hash tags', async () => {
    const bloom = filter({ bits: 40_000, hashes: 4, shards: 4 })
    const { generation } = await bloom.rebuild(chunks(range(0, 2000, 'item'), 500))
    const { shards, meta } = bloom.keys(generation)
    const tags = shards.map((key) => /\{([^}]*)\}/.exec(key)?.[1])
    expect(new Set(tags).size).toBe(4)
    expect(tags).not.toContain(/\{([^}]*)\}/.exec(meta)?.[1])
    for (const key of shards) {
      expect(await redis.strlen(key)).toBe(10_000 / 8)
      expect(await redis.bitcount(key)).toBeGreaterThan(500) // every shard got items
    }
  })

  it('rebuild replaces the contents, switches generation and UNLINKs the old one', async () => {
    const bloom = filter({ bits: 100_000, hashes: 5 })
    const first = await bloom.rebuild(chunks(range(0, 500, 'old'), 100))
    expect((await bloom.mightContain(range(0, 500, 'old'))).every(Boolean)).toBe(true)
    const second = await bloom.rebuild(chunks(range(0, 500, 'new'), 100))
    expect(second.generation).toBeGreaterThan(first.generation)
    expect(second.items).toBe(500)
    expect((await bloom.mightContain(range(0, 500, 'new'))).every(Boolean)).toBe(true)
    expect((await bloom.mightContain(range(0, 500, 'old'))).filter(Boolean).length).toBeLessThan(10)
    expect(await redis.exists(...bloom.keys(first.generation).shards)).toBe(0)
    expect(await redis.hget(bloom.keys(second.generation).meta, 'building')).toBeNull()
  })

  it('queries during a rebuild answer from the old generation; a failed rebuild leaves it served', async () => {
    const bloom = filter({ bits: 100_000, hashes: 5 })
    await bloom.rebuild(chunks(range(0, 300, 'a'), 100))
    const controller = new AbortController()
    let seenDuring: boolean[] = []
    async function* slowSource(): AsyncIterable<string[]> {
      yield range(0, 100, 'b')
      seenDuring = await bloom.mightContain([...range(0, 300, 'a'), 'b:0'])
      controller.abort()
      yield range(100, 200, 'b')
    }
    const error = await bloom.rebuild(slowSource(), { signal: controller.signal }).catch((e) => e)
    expect(error).toBeInstanceOf(BloomRebuildError)
    expect(seenDuring.slice(0, 300).every(Boolean)).toBe(true)
    expect(seenDuring[300]).toBe(false) // b:0 is only in the unfinished generation (k=5 bits: FP ≈ 0)
    expect((await bloom.mightContain(range(0, 300, 'a'))).every(Boolean)).toBe(true)
    const meta = await redis.hgetall(bloom.keys(1).meta)
    expect(meta.building).toBeUndefined()
  })

  it('one rebuild at a time: a second one fails with LockTimeoutError', async () => {
    const bloom = filter()
    const lock = await Mutex.named(
      redis,
      keySpace,
      `bloom:${bloom.name}:m${bloom.bitsPerShard}k${bloom.hashes}s1`,
    ).tryAcquire()
    expect(lock).not.toBeNull()
    await expect(bloom.rebuild(chunks(['x'], 1))).rejects.toBeInstanceOf(LockTimeoutError)
    await lock?.release()
    await bloom.rebuild(chunks(['x'], 1))
  })
})
