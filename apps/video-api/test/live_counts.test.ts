import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, createVideo, registerUser, secondInstance, type TestApp } from './support/app.js'
import { TEST_REDIS_CLUSTER_NODES } from './support/redis.js'
import { SqlRecorder } from './support/sql_recorder.js'

/** The fallback's statement (overlay.ts dbCounts): the count columns of a page of videos. */
const COUNTS_QUERY = /v\.like_count, v\.favorite_count, v\.play_count/

const sqlRecorder = SqlRecorder.install()

let t: TestApp
let other: FastifyInstance

beforeAll(async () => {
  // No video cache in test apps, so each GET loads its row: a database guard queue roomy enough for
  // the 500 concurrent rows (the default, 40, sheds most of them with 503, as it should).
  t = await createTestApp('livecounts', {
    dbGuard: { maxConcurrent: 10, maxQueue: 1000, maxQueueWaitMs: 30_000 },
  })
  // a second instance on the same Redis prefix and database
  other = await secondInstance(t)
})

afterAll(async () => {
  await other.close()
  await t.redis.del(`{${t.prefix}:epoch}:rebuild`, `{${t.prefix}:epoch}:rebuild:fence`)
  await t.close()
  sqlRecorder.restore()
})

describe('live counts while Redis cannot answer', () => {
  it('500 concurrent GETs of one video cost PostgreSQL a few count queries, not one each', async () => {
    const { app, redis, prefix } = t
    const owner = await registerUser(app, `lc_owner_${randomBytes(3).toString('hex')}`)
    const video = await createVideo(app, owner.auth)
    // Redis lost its data and another instance holds the rebuild lock: no Redis counts for a while.
    await redis.set(`{${prefix}:epoch}:rebuild`, 'another-instance', 'PX', 60_000)
    try {
      await redis.del(`${prefix}:epoch:v2`)
      expect(await app.counters.recovery.check()).toBe('rebuilding')
      const before = sqlRecorder.count(COUNTS_QUERY)
      const responses = await Promise.all(
        Array.from({ length: 500 }, () => app.inject({ method: 'GET', url: `/videos/${video.id}` })),
      )
      const queries = sqlRecorder.count(COUNTS_QUERY) - before
      for (const res of responses) {
        expect(res.statusCode).toBe(200)
        expect(res.json()).toMatchObject({ id: video.id, likeCount: 0, countsStale: true })
      }
      // one fallback per video per maxAgeMs (1 s); a slow run may span a second or two
      expect(queries).toBeLessThanOrEqual(3)
    } finally {
      await redis.del(`{${prefix}:epoch}:rebuild`)
    }
    expect(await app.counters.recovery.waitUntilServing(10_000)).toBe(true)
    expect(await other.counters.recovery.waitUntilServing(10_000)).toBe(true)
  })
})

describe('live counts with Redis up', () => {
  it('a like made on one instance shows in liked and likeCount on another right after', async () => {
    const { app } = t
    const owner = await registerUser(app, `lc_author_${randomBytes(3).toString('hex')}`)
    const fan = await registerUser(app, `lc_fan_${randomBytes(3).toString('hex')}`)
    const video = await createVideo(app, owner.auth)
    const url = `/videos/${video.id}`
    // both instances hold the counts in process
    expect((await other.inject({ method: 'GET', url })).json()).toMatchObject({ likeCount: 0 })
    expect((await app.inject({ method: 'GET', url })).json()).toMatchObject({ likeCount: 0 })
    const like = await app.inject({ method: 'PUT', url: `${url}/like`, headers: fan.auth })
    expect(like.json()).toMatchObject({ liked: true, likeCount: 1 })
    // the writing instance shows its own write at once, anonymous or not
    const own = (await app.inject({ method: 'GET', url })).json()
    expect(own).toMatchObject({ likeCount: 1 })
    // the other instance: the writer reads its own write there too
    const mine = (await other.inject({ method: 'GET', url, headers: fan.auth })).json()
    expect(mine).toMatchObject({ liked: true, likeCount: 1 })
    expect(mine).not.toHaveProperty('countsStale')
    // and that read refreshed the other instance's shared counts
    expect((await other.inject({ method: 'GET', url })).json()).toMatchObject({ likeCount: 1 })
    const unlike = await other.inject({ method: 'DELETE', url: `${url}/like`, headers: fan.auth })
    expect(unlike.json()).toMatchObject({ liked: false, likeCount: 0 })
    expect((await app.inject({ method: 'GET', url, headers: fan.auth })).json()).toMatchObject({
      liked: false,
      likeCount: 0,
    })
  })
})

describe('live counts with client tracking (COUNTS_TRACKING, default on)', () => {
  it('anonymous views make no counts read in steady state; a like elsewhere shows once Redis invalidates', async () => {
    const tracking = other.counters.live.tracking!
    if (TEST_REDIS_CLUSTER_NODES !== undefined) {
      // not supported on a cluster: COUNTS_MAX_AGE_MS bounds the counts there
      expect(tracking.state).toBe('unsupported')
      return
    }
    expect(await tracking.whenEstablished(5_000)).toBe(true)
    const owner = await registerUser(t.app, `lc_trk_${randomBytes(3).toString('hex')}`)
    const fan = await registerUser(t.app, `lc_trkfan_${randomBytes(3).toString('hex')}`)
    const video = await createVideo(t.app, owner.auth)
    const url = `/videos/${video.id}`
    expect((await other.inject({ method: 'GET', url })).json()).toMatchObject({ likeCount: 0 })
    const stats = other.counters.live.stats
    const reads = stats.redisBatches
    const hits = stats.trackedHits
    for (let i = 0; i < 20; i++) {
      const body = (await other.inject({ method: 'GET', url })).json()
      expect(body).toMatchObject({ likeCount: 0 })
      expect(body).not.toHaveProperty('countsStale')
    }
    expect(stats.redisBatches).toBe(reads)
    expect(stats.trackedHits).toBe(hits + 20)
    const invalidations = stats.invalidations
    await t.app.inject({ method: 'PUT', url: `${url}/like`, headers: fan.auth })
    const start = Date.now()
    while (stats.invalidations === invalidations && Date.now() - start < 5_000)
      await new Promise((resolve) => setTimeout(resolve, 1))
    expect(stats.invalidations).toBeGreaterThan(invalidations)
    expect((await other.inject({ method: 'GET', url })).json()).toMatchObject({ likeCount: 1 })
    expect(stats.redisBatches).toBe(reads + 1)
  })

  it('COUNTS_TRACKING=false: no tracking, the maxAgeMs bound only', async () => {
    const plain = await secondInstance(t, { counters: { tracking: false } })
    try {
      expect(plain.counters.live.tracking).toBeUndefined()
    } finally {
      await plain.close()
    }
  })
})
