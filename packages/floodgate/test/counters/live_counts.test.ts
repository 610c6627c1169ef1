import { until } from '@floodgate/test-support'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CountsFallback,
  CountsReader,
  type FallbackCounts,
  type Interactions,
  InvalidArgumentError,
  LiveCounts,
  type LiveCountsOptions,
  playViewer,
} from '../../src/index.js'
import { type CountsFixture, createCountsFixture } from './counts_fixture.js'
import { type CountersSchema, seedMembers } from './pg_schema.js'

// A private redis-server: its INFO commandstats counts exactly the commands these reads send.
let f: CountsFixture
let redis: Redis
let schema: CountersSchema
let interactions: Interactions
let reader: CountsReader
let clock = 1_000_000
/** Every call of the fallback, with the ids it asked for. */
const fallbackCalls: string[][] = []

/** The fallback video-api uses, in short: the PostgreSQL count columns (and the viewer's rows). */
const pgFallback: CountsFallback = async (ids, viewer) => {
  fallbackCalls.push([...ids])
  const { rows } = await schema.db.query<{ id: string; l: number; f: number; p: number; liked: boolean }>(
    `SELECT id::text AS id, like_count::int AS l, favorite_count::int AS f, play_count::int AS p,
       EXISTS (SELECT 1 FROM item_likes k WHERE k.item_id = v.id AND k.user_id = $2::bigint) AS liked
     FROM items v WHERE id = ANY($1::bigint[])`,
    [ids, viewer ?? null],
  )
  return new Map(
    rows.map((r): [string, FallbackCounts] => [
      r.id,
      viewer === undefined
        ? { likes: r.l, favorites: r.f, plays: r.p }
        : { likes: r.l, favorites: r.f, plays: r.p, liked: r.liked, favorited: false },
    ]),
  )
}

function layer(options: Partial<LiveCountsOptions> = {}): LiveCounts {
  return new LiveCounts({ reader, fallback: pgFallback, now: () => clock, ...options })
}

const scardCalls = () => f.scardCalls()

beforeAll(async () => {
  f = await createCountsFixture('live', 20)
  ;({ redis, schema, interactions } = f)
  reader = new CountsReader({ redis, prefix: f.prefix, partitions: 4, timeoutMs: 200 })
})

afterAll(() => f.close())

describe('LiveCounts with Redis up', () => {
  it('1,000 concurrent anonymous reads of one id send one Redis read; none again within maxAgeMs', async () => {
    await interactions.setLiked('1', '10', true)
    await interactions.recordPlay('1', playViewer({ userId: '10' }))
    const live = layer()
    const before = await scardCalls()
    const reads = await Promise.all(Array.from({ length: 1000 }, () => live.read(['1'])))
    expect(await scardCalls()).toBe(before + 2)
    for (const read of reads) {
      expect(read.counts.get('1')).toMatchObject({ likes: 1, favorites: 0, plays: 1, stale: false })
    }
    expect(live.stats).toMatchObject({ redisBatches: 1, redisIds: 1, fallbackLoads: 0 })
    clock += 999
    await live.read(['1'])
    expect(await scardCalls()).toBe(before + 2)
    clock += 1
    await Promise.all(Array.from({ length: 100 }, () => live.read(['1'])))
    expect(await scardCalls()).toBe(before + 4)
    expect(live.stats.redisBatches).toBe(2)
  })

  it('prefetch: one Redis read that a read right after joins; none while fresh counts are kept', async () => {
    await interactions.setLiked('6', '10', true)
    const live = layer()
    const before = await scardCalls()
    live.prefetch('6')
    live.prefetch('6') // pending already: nothing more
    const read = await live.read(['6'])
    expect(read.counts.get('6')).toMatchObject({ likes: 1, favorites: 0, stale: false })
    expect(await scardCalls()).toBe(before + 2)
    expect(live.stats.redisBatches).toBe(1)
    live.prefetch('6') // kept and fresh
    expect(live.peek('6')).toMatchObject({ likes: 1 })
    await new Promise(setImmediate)
    expect(live.stats.redisBatches).toBe(1)
    // alone, its answer is kept: the next peek needs no read
    const other = layer()
    other.prefetch('6')
    await until(() => other.peek('6') !== undefined, { what: 'the prefetched counts' })
    expect(other.stats.redisBatches).toBe(1)
    expect(() => live.prefetch('x')).toThrow(InvalidArgumentError)
  })

  it('puts every id and viewer asked in the same tick in one Redis read, with each viewer’s flags', async () => {
    await interactions.setLiked('2', '21', true)
    await interactions.setFavorited('3', '22', true)
    const live = layer()
    const before = await scardCalls()
    const [anon, u21, u22] = await Promise.all([
      live.read(['2', '3', '4']),
      live.read(['2', '3'], '21'),
      live.read(['3'], '22'),
    ])
    // one read: SCARD ×2 for 3 ids; the flags are SISMEMBER
    expect(await scardCalls()).toBe(before + 6)
    expect(live.stats.redisBatches).toBe(1)
    expect(anon.counts.get('2')).toMatchObject({ likes: 1, favorites: 0 })
    expect(anon.counts.get('2')).not.toHaveProperty('liked')
    expect(u21.counts.get('2')).toMatchObject({ likes: 1, liked: true, favorited: false })
    expect(u21.counts.get('3')).toMatchObject({ favorites: 1, liked: false, favorited: false })
    expect(u22.counts.get('3')).toMatchObject({ favorites: 1, liked: false, favorited: true })
  })

  it('shows its own write at once; a viewer read goes to Redis and refreshes the shared entry', async () => {
    const live = layer()
    expect((await live.read(['5'])).counts.get('5')).toMatchObject({ likes: 0 })
    const like = await interactions.setLiked('5', '30', true)
    live.noteWrite('5', 'likes', like.count)
    const before = await scardCalls()
    expect((await live.read(['5'])).counts.get('5')).toMatchObject({ likes: 1, stale: false })
    expect(await scardCalls()).toBe(before)
    // another process's write: this process sees it through a viewer read
    await interactions.setLiked('5', '31', true)
    expect((await live.read(['5'], '31')).counts.get('5')).toMatchObject({ likes: 2, liked: true })
    expect((await live.read(['5'])).counts.get('5')).toMatchObject({ likes: 2 })
  })

  it('does not store a read that was in flight when this process wrote', async () => {
    const live = layer()
    const inFlight = live.read(['6'])
    await new Promise((resolve) => setImmediate(resolve)) // the read is sent
    live.noteWrite('6', 'likes', 1) // a write acknowledged before that read's reply
    await inFlight
    // the read's answer, older than the write, was not kept: the next read asks Redis again
    const before = await scardCalls()
    await live.read(['6'])
    expect(await scardCalls()).toBe(before + 2)
  })
})

describe('LiveCounts.peek (in process only, synchronous)', () => {
  it('gives the counts read would serve now, counted as local hits; undefined when read would ask', async () => {
    await interactions.setLiked('11', '10', true)
    const live = layer()
    expect(live.peek('11')).toBeUndefined()
    expect(live.stats.localHits).toBe(0)
    await live.read(['11'])
    const peeked = live.peek('11')
    expect(peeked).toMatchObject({ likes: 1, favorites: 0, plays: 0, source: 'redis', stale: false })
    expect(peeked).toEqual((await live.read(['11'])).counts.get('11'))
    expect(live.stats.localHits).toBe(2)
    // a viewer's flags are not kept in process: read asks Redis for them
    expect(live.peek('11', '10')).toBeUndefined()
    clock += 1000 // maxAgeMs: read would ask Redis again
    expect(live.peek('11')).toBeUndefined()
    expect(live.stats).toMatchObject({ localHits: 2, trackedHits: 0, redisBatches: 1 })
    expect(() => live.peek('0')).toThrow(InvalidArgumentError)
    expect(() => live.peek('11', 'x')).toThrow(InvalidArgumentError)
  })
})

describe('LiveCounts when Redis cannot answer', () => {
  it('serves the last Redis counts stale, and loads unknown ids once per id per maxAgeMs', async () => {
    await seedMembers(schema.db, 'likes', 8, [1, 2, 3])
    const live = layer({ maxStaleMs: 60_000 })
    expect((await live.read(['7'])).counts.get('7')).toMatchObject({ likes: 0, stale: false })
    await redis.del(interactions.keys.epoch())
    try {
      clock += 1000
      const reads = await Promise.all(Array.from({ length: 1000 }, () => live.read(['7', '8'])))
      for (const read of reads) {
        expect(read.counts.get('7')).toMatchObject({ likes: 0, source: 'redis', stale: true })
        expect(read.counts.get('8')).toMatchObject({ likes: 3, source: 'fallback', stale: true })
      }
      expect(reads[0]?.unavailable).toBe('epoch-missing')
      // '7' had Redis counts; '8' went to PostgreSQL once for all 1,000 reads
      expect(fallbackCalls.filter((ids) => ids.includes('7'))).toEqual([])
      expect(fallbackCalls.filter((ids) => ids.includes('8'))).toHaveLength(1)
      expect(live.stats.redisBatches).toBe(2)
      clock += 999
      await Promise.all(Array.from({ length: 100 }, () => live.read(['8'])))
      expect(fallbackCalls.filter((ids) => ids.includes('8'))).toHaveLength(1)
      expect(live.stats.redisBatches).toBe(2)
      clock += 1
      await Promise.all(Array.from({ length: 100 }, () => live.read(['8'])))
      expect(fallbackCalls.filter((ids) => ids.includes('8'))).toHaveLength(2)
      expect(live.stats.redisBatches).toBe(3)
      // past maxStaleMs the last Redis counts are no longer served: PostgreSQL is asked
      clock += 60_001
      expect((await live.read(['7'])).counts.get('7')).toMatchObject({ source: 'fallback', stale: true })
    } finally {
      await redis.set(interactions.keys.epoch(), 'e1')
    }
  })

  it('a viewer’s flags come from the fallback while Redis is down', async () => {
    const live = layer()
    await live.read(['8'])
    await redis.del(interactions.keys.epoch())
    try {
      const read = await live.read(['8'], '2')
      expect(read.counts.get('8')).toMatchObject({ liked: true, favorited: false, stale: true })
    } finally {
      await redis.set(interactions.keys.epoch(), 'e1')
    }
  })

  it('a prefetch Redis cannot answer calls no fallback: the read that needs the counts does', async () => {
    await seedMembers(schema.db, 'likes', 11, [1, 2])
    const live = layer()
    await redis.del(interactions.keys.epoch())
    try {
      const calls = fallbackCalls.length
      live.prefetch('11')
      await until(() => live.stats.redisFailures === 1, { what: "the prefetch's failed Redis read" })
      // its caller may yet be refused (video-api: a rate limit): PostgreSQL is not asked for it
      expect(fallbackCalls.length).toBe(calls)
      const read = await live.read(['11'])
      expect(read.counts.get('11')).toMatchObject({ likes: 2, source: 'fallback', stale: true })
      expect(fallbackCalls.slice(calls)).toEqual([['11']])
    } finally {
      await redis.set(interactions.keys.epoch(), 'e1')
    }
  })

  it('serves the last counts stale when the server is killed, with no fallback call', async () => {
    const live = layer()
    await interactions.setLiked('9', '50', true)
    expect((await live.read(['9'])).counts.get('9')).toMatchObject({ likes: 1, stale: false })
    const calls = fallbackCalls.length
    await f.server.kill()
    clock += 1000
    const reads = await Promise.all(Array.from({ length: 200 }, () => live.read(['9'])))
    for (const read of reads) expect(read.counts.get('9')).toMatchObject({ likes: 1, stale: true })
    expect(['redis-error', 'timeout']).toContain(reads[0]?.unavailable)
    expect(fallbackCalls.length).toBe(calls)
    expect(live.stats.redisFailures).toBe(1)
    // Redis is not asked again for maxAgeMs: peek serves what read does, stale
    expect(live.peek('9')).toMatchObject({ likes: 1, stale: true })
  })

  it('sends no read while its client is disconnected: the fallback answers without a batch turn', async () => {
    await f.server.kill() // idempotent: the test above may have killed it
    // the client learns of the closed socket an event-loop turn or more after the kill
    await until(() => redis.status !== 'ready', { what: 'client not ready' })
    const live = layer()
    const read = await live.read(['3'])
    expect(read.unavailable).toBe('redis-error')
    expect(read.counts.get('3')).toMatchObject({ source: 'fallback', stale: true })
    expect(live.stats).toMatchObject({ redisBatches: 0, redisFailures: 1, fallbackLoads: 1 })
  })

  it('stays within its entry bound', async () => {
    const live = layer({ maxEntries: 3 })
    await Promise.all(['1', '2', '3', '4', '5'].map((id) => live.read([id])))
    expect(live.size).toBe(3)
  })
})
