import { until } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  ClientTracking,
  CountsReader,
  floodgateRedisOptions,
  type Interactions,
  LiveCounts,
  type LiveCountsOptions,
} from '../../src/index.js'
import { StallingProxy } from '../support/stalling_proxy.js'
import { type CountsFixture, createCountsFixture } from './counts_fixture.js'

// A private redis-server: INFO commandstats counts exactly the reads, and tests kill connections.
let f: CountsFixture
let interactions: Interactions
let clock = 1_000_000
const made: { live: LiveCounts; tracking: ClientTracking; client: Redis }[] = []

/** A LiveCounts with tracking on its own client to `url` (the private server unless a proxy is given). */
async function trackedLayer(url = f.server.url, options: Partial<LiveCountsOptions> = {}) {
  const client = new Redis(url, floodgateRedisOptions({ commandTimeoutMs: 2000 }))
  client.on('error', () => undefined)
  const tracking = new ClientTracking(client)
  const reader = new CountsReader({ redis: client, prefix: f.prefix, partitions: 4, timeoutMs: 500 })
  const live = new LiveCounts({
    reader,
    fallback: async () => undefined,
    tracking,
    now: () => clock,
    ...options,
  })
  made.push({ live, tracking, client })
  expect(await tracking.whenEstablished(5_000)).toBe(true)
  return { live, tracking, client }
}

async function likes(live: LiveCounts, id = '1'): Promise<number | undefined> {
  return (await live.read([id])).counts.get(id)?.likes
}

beforeAll(async () => {
  f = await createCountsFixture('livetrack', 20)
  interactions = f.interactions
})

afterEach(() => {
  for (const { live, tracking, client } of made.splice(0)) {
    live.close()
    tracking.close()
    client.disconnect()
  }
})

afterAll(() => f.close())

describe('LiveCounts with client tracking', () => {
  it('steady state: no Redis read however old the entry; a change by another client is read once', async () => {
    const { live } = await trackedLayer()
    await interactions.setLiked('1', '10', true)
    expect(await likes(live)).toBe(1)
    const before = await f.scardCalls()
    clock += 3_600_000 // an hour later: maxAgeMs (1 s) no longer bounds a tracked entry
    const reads = await Promise.all(Array.from({ length: 1000 }, () => live.read(['1'])))
    for (const read of reads) expect(read.counts.get('1')).toMatchObject({ likes: 1, stale: false })
    expect(await f.scardCalls()).toBe(before)
    expect(live.stats.trackedHits).toBe(1000)
    await interactions.setLiked('1', '11', true) // another client (the fixture's)
    await until(() => live.stats.invalidations === 1)
    const written = await f.scardCalls() // the like's script runs a SCARD too
    expect(await likes(live)).toBe(2)
    expect(await f.scardCalls()).toBe(written + 2)
    expect(await likes(live)).toBe(2)
    expect(await f.scardCalls()).toBe(written + 2)
  })

  it('an item in several buckets: every like invalidates (through the meta key), bucket 0 untouched or not', async () => {
    const users = Array.from({ length: 600 }, (_, i) => String(5000 + i))
    for (let i = 0; i < users.length; i += 50)
      await Promise.all(users.slice(i, i + 50).map((u) => interactions.setLiked('12', u, true)))
    const { live } = await trackedLayer()
    expect(await likes(live, '12')).toBe(600)
    expect(await likes(live, '12')).toBe(600)
    expect(live.stats.trackedHits).toBe(1)
    // ten more likes by another client, each into whichever bucket its id hashes to
    for (let n = 1; n <= 10; n++) {
      const seen = live.stats.invalidations
      await interactions.setLiked('12', String(9000 + n), true)
      await until(() => live.stats.invalidations > seen)
      expect(await likes(live, '12')).toBe(600 + n)
    }
  })

  it('an invalidation that overtakes the reply of its read: the reply is served but not kept', async () => {
    const proxy = await StallingProxy.start(f.server.port)
    try {
      const { live, tracking } = await trackedLayer(proxy.url)
      await interactions.setLiked('2', '20', true)
      const before = await f.scardCalls()
      proxy.holdReplies('floodgate-tracking:data')
      const reading = live.read(['2'])
      await until(async () => (await f.scardCalls()) === before + 2) // Redis ran the read; reply held
      await interactions.setLiked('2', '21', true)
      await until(() => tracking.stats.invalidatedKeys > 0) // the invalidation arrived first
      const written = await f.scardCalls() // the like's script runs a SCARD too
      proxy.releaseReplies()
      expect((await reading).counts.get('2')?.likes).toBe(1) // true when Redis ran the read
      expect(await likes(live, '2')).toBe(2) // not kept: read again
      expect(await f.scardCalls()).toBe(written + 2)
    } finally {
      await proxy.close()
    }
  })

  it('invalidation connection killed while a write happens: the next reads get the new count', async () => {
    const { live, tracking } = await trackedLayer()
    await interactions.setLiked('3', '30', true)
    expect(await likes(live, '3')).toBe(1)
    const list = (await f.redis.client('LIST')) as string
    const id = /^id=(\d+) .* name=floodgate-tracking:invalidate /m.exec(list)![1]!
    await f.redis.client('KILL', 'ID', id)
    await interactions.setLiked('3', '31', true) // its invalidation has nowhere to go
    await until(() => !tracking.established)
    expect(live.stats.trackingFlushes).toBe(1)
    // tracking down: read on the caller's client, bounded by maxAgeMs again
    expect((await live.read(['3'])).counts.get('3')).toMatchObject({ likes: 2, stale: false })
    expect(await tracking.whenEstablished(5_000)).toBe(true)
    clock += 1_000
    expect(await likes(live, '3')).toBe(2)
    // and tracked again: a later change arrives as an invalidation
    await interactions.setLiked('3', '32', true)
    await until(() => live.stats.invalidations === 1)
    expect(await likes(live, '3')).toBe(3)
  })

  it('shows its own write at once and keeps serving the last counts stale while Redis is down', async () => {
    const { live, tracking } = await trackedLayer()
    await interactions.setLiked('4', '40', true)
    expect(await likes(live, '4')).toBe(1)
    const after = await interactions.setLiked('4', '41', true)
    live.noteWrite('4', 'likes', after.count)
    expect(await likes(live, '4')).toBe(2)
    await until(() => live.stats.invalidations === 1)
    expect(await likes(live, '4')).toBe(2)
    await f.server.kill()
    try {
      await until(() => !tracking.established)
      clock += 1_000
      const read = await live.read(['4'])
      expect(read.counts.get('4')).toMatchObject({ likes: 2, stale: true, source: 'redis' })
      expect(read.unavailable).toBe('redis-error')
    } finally {
      await f.server.start()
      await until(() => f.redis.status === 'ready')
      await f.redis.set(interactions.keys.epoch(), 'e1') // a fresh server: the marker is back
    }
  })

  it('epoch marker deleted (a loss or a replace rebuild): every tracked entry is read again', async () => {
    const { live } = await trackedLayer()
    await interactions.setLiked('5', '50', true)
    await interactions.setLiked('6', '60', true)
    expect((await live.read(['5', '6'])).counts.size).toBe(2)
    await f.redis.del(interactions.keys.epoch())
    await until(() => live.stats.trackingFlushes === 1)
    const read = await live.read(['5', '6'])
    expect(read.unavailable).toBe('epoch-missing')
    expect(read.counts.get('5')).toMatchObject({ likes: 1, stale: true })
    await f.redis.set(interactions.keys.epoch(), 'e2')
    clock += 1_000
    expect((await live.read(['5'])).counts.get('5')).toMatchObject({ likes: 1, stale: false })
  })

  it('peek answers tracked counts however old; nothing once invalidated or tracking is lost', async () => {
    const { live, tracking } = await trackedLayer()
    await interactions.setLiked('9', '90', true)
    expect(await likes(live, '9')).toBe(1)
    clock += 3_600_000
    expect(live.peek('9')).toMatchObject({ likes: 1, stale: false })
    expect(live.stats).toMatchObject({ localHits: 1, trackedHits: 1 })
    await interactions.setLiked('9', '91', true)
    await until(() => live.stats.invalidations === 1)
    expect(live.peek('9')).toBeUndefined()
    expect(await likes(live, '9')).toBe(2)
    expect(live.peek('9')).toMatchObject({ likes: 2, stale: false })
    const list = (await f.redis.client('LIST')) as string
    const id = /^id=(\d+) .* name=floodgate-tracking:invalidate /m.exec(list)![1]!
    await f.redis.client('KILL', 'ID', id)
    await until(() => !tracking.established)
    expect(live.peek('9')).toBeUndefined()
    expect(live.stats).toMatchObject({ localHits: 2, trackedHits: 2 })
  })

  it('FLUSHALL (a null message): nothing tracked is served', async () => {
    const { live, tracking } = await trackedLayer()
    await interactions.setLiked('7', '70', true)
    expect(await likes(live, '7')).toBe(1)
    await f.redis.flushall()
    await until(() => tracking.stats.flushes === 1)
    await f.redis.set(interactions.keys.epoch(), 'e3')
    await f.redis.sadd(interactions.keys.likes('7'), '71', '72', '73')
    expect(await likes(live, '7')).toBe(3)
  })
})
