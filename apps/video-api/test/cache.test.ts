import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { BloomFilter } from 'floodgate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { VideoCacheSettings } from '../src/cache/settings.js'
import type { VideoReader } from '../src/videos/reader.js'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'
import { plainTestRedisClient } from './support/redis.js'

/** Counts the reads that reach the SQL reader (= database queries of the read path). */
function counting(reader: VideoReader) {
  const calls = { getById: 0, recommend: 0 }
  const wrapped: VideoReader = {
    getById: (id) => {
      calls.getById++
      return reader.getById(id)
    },
    listByAuthor: (...args) => reader.listByAuthor(...args),
    recommend: (limit) => {
      calls.recommend++
      return reader.recommend(limit)
    },
  }
  return { calls, wrapped }
}

interface CachedApp {
  app: FastifyInstance
  calls: { getById: number; recommend: number }
  prefix: string
}

const redis = plainTestRedisClient()
const testApps: TestApp[] = []

async function cachedApp(label: string, cache: VideoCacheSettings): Promise<CachedApp> {
  let calls = { getById: 0, recommend: 0 }
  const t = await createTestApp(label, {
    wrapReader: (reader) => {
      const c = counting(reader)
      calls = c.calls
      return c.wrapped
    },
    // a generous Redis timeout: the test machine is shared and busy
    cache: { redisTimeoutMs: 1000, ...cache },
  })
  testApps.push(t)
  return { app: t.app, calls, prefix: t.prefix }
}

let gated: CachedApp
let plain: CachedApp

beforeAll(async () => {
  gated = await cachedApp('cache_gated', { rebuildBloomAtStart: true, bloomBits: 100_000, bloomHashes: 7 })
  plain = await cachedApp('cache_plain', { rebuildBloomAtStart: false })
}, 60_000)

afterAll(async () => {
  for (const t of testApps) await t.close()
  redis.disconnect()
})

describe('GET /videos/:id through the cache', () => {
  it('the second read does not reach the database; an update invalidates', async () => {
    const { app, calls } = plain
    const owner = await registerUser(app, 'cache_owner1')
    const video = await createVideo(app, owner.auth, { title: 'first title' })
    const before = calls.getById
    for (let i = 0; i < 3; i++) {
      const res = await app.inject({ method: 'GET', url: `/videos/${video.id}` })
      expect(res.statusCode).toBe(200)
      expect(res.json().title).toBe('first title')
    }
    expect(calls.getById - before).toBe(1)
    const patch = await app.inject({
      method: 'PATCH',
      url: `/videos/${video.id}`,
      headers: owner.auth,
      payload: { title: 'second title' },
    })
    expect(patch.statusCode).toBe(200)
    const afterPatch = calls.getById
    const res = await app.inject({ method: 'GET', url: `/videos/${video.id}` })
    expect(res.json().title).toBe('second title')
    expect(calls.getById - afterPatch).toBe(1)
  })

  it('a missing id is negatively cached: one database read for many requests', async () => {
    const { app, calls } = plain
    const before = calls.getById
    for (let i = 0; i < 5; i++) {
      expect((await app.inject({ method: 'GET', url: '/videos/987654321' })).statusCode).toBe(404)
    }
    expect(calls.getById - before).toBe(1)
  })

  it('private and deleted videos: one cached row, visibility decided per caller', async () => {
    const { app, calls } = plain
    const owner = await registerUser(app, 'cache_owner2')
    const other = await registerUser(app, 'cache_other2')
    const video = await createVideo(app, owner.auth, { visibility: 'private' })
    const before = calls.getById
    const url = `/videos/${video.id}`
    expect((await app.inject({ method: 'GET', url, headers: owner.auth })).statusCode).toBe(200)
    expect((await app.inject({ method: 'GET', url, headers: other.auth })).statusCode).toBe(404)
    expect((await app.inject({ method: 'GET', url })).statusCode).toBe(404)
    expect((await app.inject({ method: 'GET', url, headers: owner.auth })).statusCode).toBe(200)
    expect(calls.getById - before).toBe(1)
    const del = await app.inject({ method: 'DELETE', url, headers: owner.auth })
    expect(del.statusCode).toBe(204)
    expect((await app.inject({ method: 'GET', url, headers: owner.auth })).statusCode).toBe(404)
    expect((await app.inject({ method: 'GET', url, headers: other.auth })).statusCode).toBe(404)
  })

  it('with the Bloom filter built: missing ids never reach the database; a new video is readable at once', async () => {
    const { app, calls, prefix } = gated
    const owner = await registerUser(app, 'cache_owner3')
    const existing = await createVideo(app, owner.auth)
    const bloom = new BloomFilter({ redis, prefix, name: 'videos', bits: 100_000, hashes: 7 })
    const deadline = Date.now() + 10_000
    while (!(await bloom.isReady()) && Date.now() < deadline) await sleep(50)
    expect(await bloom.isReady()).toBe(true)
    const before = calls.getById
    for (let i = 0; i < 50; i++) {
      expect((await app.inject({ method: 'GET', url: `/videos/${900_000_000 + i}` })).statusCode).toBe(404)
    }
    expect(calls.getById - before).toBe(0)
    // Created after the rebuild: added to the filter before the create returned.
    const fresh = await createVideo(app, owner.auth, { title: 'brand new' })
    const res = await app.inject({ method: 'GET', url: `/videos/${fresh.id}` })
    expect(res.statusCode).toBe(200)
    expect(res.json().title).toBe('brand new')
    expect((await app.inject({ method: 'GET', url: `/videos/${existing.id}` })).statusCode).toBe(200)
  })
})

describe('GET /feed/recommend through the cache', () => {
  it('served from the cache until a publish, update or delete invalidates it', async () => {
    const { app, calls } = plain
    const owner = await registerUser(app, 'cache_owner4')
    const before = calls.recommend
    await app.inject({ method: 'GET', url: '/feed/recommend' })
    await app.inject({ method: 'GET', url: '/feed/recommend' })
    expect(calls.recommend - before).toBe(1)
    const video = await createVideo(app, owner.auth, { title: 'in the feed' })
    const feed = await app.inject({ method: 'GET', url: '/feed/recommend' })
    expect(feed.json().items.map((v: { id: string }) => v.id)).toContain(video.id)
    expect(calls.recommend - before).toBe(2)
    await app.inject({ method: 'DELETE', url: `/videos/${video.id}`, headers: owner.auth })
    const after = await app.inject({ method: 'GET', url: '/feed/recommend' })
    expect(after.json().items.map((v: { id: string }) => v.id)).not.toContain(video.id)
  })
})

describe('/metrics', () => {
  it('shows the cache counters', async () => {
    const res = await plain.app.inject({ method: 'GET', url: '/metrics' })
    expect(res.body).toMatch(/floodgate_cache_events_total\{cache="video",outcome="l1_hit"\} [1-9]/)
    expect(res.body).toMatch(/floodgate_cache_events_total\{cache="video",outcome="negative_hit"\} [1-9]/)
    expect(res.body).toMatch(/floodgate_cache_breaker_state\{cache="feed"\} 0/)
  })
})
