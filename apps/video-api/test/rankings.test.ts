import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { InteractionKeys, type RedisClient, toMember } from 'floodgate'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createAdminTestApp, createVideo, registerUser, type TestApp, type TestUser } from './support/app.js'
import { SqlRecorder } from './support/sql_recorder.js'

// Issue test 7 at the service level (order, ties, window expiry, deleted/private skipped),
// plus counts in payloads, the stale fallback, /me lists and the admin endpoints.
let t: TestApp
let app: FastifyInstance
let redis: RedisClient
let prefix: string
let keys: InteractionKeys
let alice: TestUser
let admin: TestUser
const fans: TestUser[] = []
const v: string[] = []

const like = (video: string, user: TestUser) =>
  app.inject({ method: 'PUT', url: `/videos/${video}/like`, headers: user.auth })
const hot = async (query: string, headers: Record<string, string> = {}) => {
  const res = await app.inject({ method: 'GET', url: `/rankings/hot?${query}`, headers })
  expect(res.statusCode, res.body).toBe(200)
  return res.json<{
    items: { rank: number; score: number; video: Record<string, unknown> & { id: string } }[]
    stale: boolean
  }>()
}

async function reconcileClean(timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const report = await app.counters.recovery.reconcile()
    if ((report.drifted.length === 0 && report.columnDrift.length === 0) || Date.now() > deadline)
      return report
    await sleep(100)
  }
}

beforeAll(async () => {
  const built = await createAdminTestApp('rank', {
    interactions: { partitions: 4 },
    interactionFlush: { blockMs: 50, batchSize: 500 },
  })
  t = built
  ;({ app, redis, prefix, admin } = built)
  keys = new InteractionKeys(prefix, 4)
  const tag = randomBytes(3).toString('hex')
  alice = await registerUser(app, `alice_${tag}`)
  for (let i = 0; i < 5; i++) fans.push(await registerUser(app, `fan${i}_${tag}`))
  for (let i = 0; i < 6; i++) v.push((await createVideo(app, alice.auth)).id)
  // likes: v0 2, v1 3, v2 2 (ties v0, newer), v3 5 (deleted below), v4 4 (made private below), v5 0
  const plan: [number, number][] = [
    [0, 2],
    [1, 3],
    [2, 2],
    [3, 5],
    [4, 4],
  ]
  for (const [video, n] of plan)
    for (let f = 0; f < n; f++) expect((await like(v[video]!, fans[f]!)).statusCode).toBe(200)
  expect(
    (await app.inject({ method: 'DELETE', url: `/videos/${v[3]}`, headers: alice.auth })).statusCode,
  ).toBe(204)
  const priv = await app.inject({
    method: 'PATCH',
    url: `/videos/${v[4]}`,
    headers: alice.auth,
    payload: { visibility: 'private' },
  })
  expect(priv.statusCode).toBe(200)
})

afterAll(async () => {
  await t?.close()
})

describe('GET /rankings/hot', () => {
  it('ranks all-time by likes, ties newer first, skipping deleted and private videos', async () => {
    const body = await hot('metric=likes&window=all')
    expect(body.stale).toBe(false)
    expect(body.items.map((i) => i.video.id)).toEqual([v[1], v[2], v[0]])
    expect(body.items.map((i) => [i.rank, i.score])).toEqual([
      [1, 3],
      [2, 2],
      [3, 2],
    ])
    expect(body.items[0]!.video).toMatchObject({ likeCount: 3, status: 'published' })
    expect((await hot('metric=likes&window=all&limit=1')).items.map((i) => i.video.id)).toEqual([v[1]])
  })

  it('trending windows: decayed buckets, newer first on ties, old buckets expire out of the window', async () => {
    expect((await hot('metric=likes&window=1h')).items.map((i) => i.video.id)).toEqual([v[1], v[2], v[0]])
    // A bucket 61 minutes old: outside 1 h, inside 24 h.
    const [seconds] = await redis.time()
    const old = keys.rankMinute(keys.partitionOf(v[5]!), 'plays', Math.floor(Number(seconds) / 60) - 61)
    await redis.zincrby(old, 50, toMember(v[5]!))
    await redis.pexpire(old, 60_000)
    expect((await hot('metric=plays&window=1h')).items).toEqual([])
    const day = await hot('metric=plays&window=24h')
    expect(day.items.map((i) => i.video.id)).toEqual([v[5]])
    expect(day.items[0]!.score).toBeGreaterThan(40)
    expect(day.items[0]!.score).toBeLessThan(50)
  })

  it("a burst of one ranking's readers shares one SELECT of its videos, and none is shed", async () => {
    const recorder = SqlRecorder.install()
    try {
      const replies = await Promise.all(
        Array.from({ length: 120 }, () =>
          app.inject({ method: 'GET', url: '/rankings/hot?metric=likes&window=all' }),
        ),
      )
      expect(replies.map((r) => r.statusCode).filter((code) => code !== 200)).toEqual([])
      // one per wave of concurrent readers (a reader arriving after a SELECT ended starts another)
      expect(recorder.count(/FROM videos\s+WHERE id IN/)).toBeLessThanOrEqual(3)
    } finally {
      recorder.restore()
    }
  })

  it('rejects unknown metrics, windows and limits with 400', async () => {
    for (const q of ['metric=shares', 'window=7d', 'limit=0', 'limit=101', 'x=1']) {
      const res = await app.inject(`/rankings/hot?${q}`)
      expect(res.statusCode, q).toBe(400)
    }
  })
})

describe('counts in video payloads', () => {
  it('detail, feed and stats carry live counts; flags only for the caller', async () => {
    const fan = fans[0]!
    const detail = await app.inject({ method: 'GET', url: `/videos/${v[1]}`, headers: fan.auth })
    expect(detail.json()).toMatchObject({ id: v[1], likeCount: 3, liked: true, favorited: false })
    expect(detail.json()).not.toHaveProperty('countsStale')
    const anonymous = (await app.inject(`/videos/${v[1]}`)).json()
    expect(anonymous).toMatchObject({ likeCount: 3 })
    expect(anonymous).not.toHaveProperty('liked')
    const feed = (await app.inject({ method: 'GET', url: '/feed/recommend', headers: fans[4]!.auth })).json<{
      items: { id: string; likeCount: number; liked: boolean }[]
    }>()
    expect(feed.items.find((i) => i.id === v[0])).toMatchObject({ likeCount: 2, liked: false })
    expect(feed.items.find((i) => i.id === v[1])).toMatchObject({ likeCount: 3, liked: false })
    const stats = await app.inject({ method: 'GET', url: `/videos/${v[2]}/stats`, headers: fans[1]!.auth })
    expect(stats.json()).toEqual({
      videoId: v[2],
      likes: 2,
      favorites: 0,
      plays: 0,
      liked: true,
      favorited: false,
      stale: false,
    })
    expect((await app.inject(`/videos/${v[3]}/stats`)).statusCode).toBe(404)
    expect((await app.inject(`/videos/${v[4]}/stats`)).statusCode).toBe(404)
  })

  it('Redis lost its data: DB columns marked stale, then rebuilt and served from Redis again', async () => {
    expect((await reconcileClean()).drifted).toEqual([]) // the flush applied everything
    // the loss, as readers see it (two DELs: on a cluster the keys live in different slots)
    await redis.del(keys.likes(v[1]!))
    await redis.del(keys.epoch())
    // Another instance holds the rebuild lock from the loss on: this instance's own recovery,
    // which the reads below start, would otherwise rebuild before the lock test further down.
    const lock = `{${prefix}:epoch}:rebuild`
    await redis.set(lock, 'another-instance', 'PX', 30_000)
    const stale = await app.inject({ method: 'GET', url: `/videos/${v[1]}`, headers: fans[0]!.auth })
    expect(stale.json()).toMatchObject({ likeCount: 3, liked: true, countsStale: true })
    // (with a viewer: an anonymous read within COUNTS_MAX_AGE_MS is answered in process)
    const stats = (await app.inject({ url: `/videos/${v[1]}/stats`, headers: fans[0]!.auth })).json()
    expect(stats).toMatchObject({ likes: 3, liked: true, stale: true })
    // While another instance holds the rebuild lock, an unlike still finds its member (the route
    // restores the video from the DB first) instead of being silently dropped.
    expect(await app.counters.recovery.check()).toBe('rebuilding')
    const unlike = await app.inject({ method: 'DELETE', url: `/videos/${v[1]}/like`, headers: fans[1]!.auth })
    expect(unlike.json()).toEqual({ videoId: v[1], liked: false, likeCount: 2 })
    const relike = await app.inject({ method: 'PUT', url: `/videos/${v[1]}/like`, headers: fans[1]!.auth })
    expect(relike.json()).toEqual({ videoId: v[1], liked: true, likeCount: 3 })
    await redis.del(lock)
    expect(await app.counters.recovery.waitUntilServing(10_000)).toBe(true)
    expect(await redis.scard(keys.likes(v[1]!))).toBe(3)
    const metrics = (await app.inject('/metrics')).body
    expect(metrics).toMatch(/floodgate_counters_stale_reads_total\{reason="epoch-missing"\} [1-9]/)
    expect(metrics).toMatch(/floodgate_counters_rebuilds_total\{outcome="rebuilt"\} [1-9]/)
    expect(metrics).toContain('floodgate_counters_serving 1')
    expect(metrics).toContain('floodgate_rankings_corrupt_scores_total 0')
    // a monotonic total is a counter: Prometheus' rate() and the `_total` suffix assume it
    expect(metrics).toContain('# TYPE floodgate_rankings_corrupt_scores_total counter')
    expect(metrics).toContain('# TYPE floodgate_rankings_window_recomputes_total counter')
    // a viewer's read asks Redis at once; anonymous reads follow within COUNTS_MAX_AGE_MS (1 s)
    const fresh = (await app.inject({ url: `/videos/${v[1]}`, headers: fans[0]!.auth })).json()
    expect(fresh).toMatchObject({ likeCount: 3, liked: true })
    expect(fresh).not.toHaveProperty('countsStale')
    await vi.waitFor(
      async () => {
        const anonymous = (await app.inject(`/videos/${v[1]}`)).json()
        expect(anonymous).toMatchObject({ likeCount: 3 })
        expect(anonymous).not.toHaveProperty('countsStale')
      },
      { timeout: 3000, interval: 100 },
    )
  })
})

describe('GET /me/likes and /me/favorites', () => {
  it('pages the caller’s likes newest first, skipping deleted and private videos', async () => {
    expect((await reconcileClean()).drifted).toEqual([])
    const fan = fans[0]! // liked v0..v4; v3 deleted, v4 private
    const first = await app.inject({ method: 'GET', url: '/me/likes?limit=2', headers: fan.auth })
    expect(first.statusCode).toBe(200)
    const page1 = first.json<{ items: { id: string; liked: boolean }[]; nextCursor: string | null }>()
    expect(page1.items.map((i) => i.id)).toEqual([v[2], v[1]])
    expect(page1.items.every((i) => i.liked)).toBe(true)
    const page2 = (
      await app.inject({
        method: 'GET',
        url: `/me/likes?limit=2&cursor=${page1.nextCursor}`,
        headers: fan.auth,
      })
    ).json<{ items: { id: string }[]; nextCursor: string | null }>()
    expect(page2.items.map((i) => i.id)).toEqual([v[0]])
    expect(page2.nextCursor).toBeNull()
    expect((await app.inject({ method: 'GET', url: '/me/favorites', headers: fan.auth })).json()).toEqual({
      items: [],
      nextCursor: null,
    })
    expect((await app.inject('/me/likes')).statusCode).toBe(401)
  })
})

describe('admin', () => {
  it('rebuild and reconcile: admins only', async () => {
    expect((await app.inject({ method: 'POST', url: '/admin/rebuild/counters' })).statusCode).toBe(401)
    const notAdmin = await app.inject({
      method: 'POST',
      url: '/admin/rebuild/counters',
      headers: fans[0]!.auth,
    })
    expect(notAdmin.statusCode).toBe(403)
    // reconcile reads a drained stream: let the flush apply the earlier tests' toggles first
    expect((await reconcileClean()).drifted).toEqual([])
    await redis.sadd(keys.likes(v[0]!), '999999') // drift: a member the DB does not have
    const drift = await app.inject({ method: 'GET', url: '/admin/reconcile', headers: admin.auth })
    expect(drift.json<{ drifted: { videoId: string }[] }>().drifted.map((d) => d.videoId)).toEqual([v[0]])
    const rebuilt = await app.inject({
      method: 'POST',
      url: '/admin/rebuild/counters?mode=replace',
      headers: admin.auth,
    })
    expect(rebuilt.statusCode, rebuilt.body).toBe(200)
    // 16 like rows, less the deleted v3's 5: its state does not come back to Redis
    expect(rebuilt.json()).toMatchObject({ mode: 'replace', likeRows: 11 })
    const clean = await app.inject({ method: 'GET', url: '/admin/reconcile', headers: admin.auth })
    // v3 is deleted: its Redis state was forgotten, reconcile leaves it out
    expect(clean.json()).toEqual({ checked: 5, drifted: [], columnDrift: [] })
  })
})
