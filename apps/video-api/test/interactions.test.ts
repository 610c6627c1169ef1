import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, createVideo, registerUser, secondInstance, type TestApp } from './support/app.js'
import type { TestDatabase } from './support/database.js'

let t: TestApp
let app: FastifyInstance
let database: TestDatabase
let alice: Awaited<ReturnType<typeof registerUser>>
let bob: Awaited<ReturnType<typeof registerUser>>
let video: string
let hidden: string

beforeAll(async () => {
  t = await createTestApp('ix', {
    interactions: { partitions: 4, playDedupeWindowMs: 300 },
    interactionFlush: { blockMs: 100, batchSize: 200 },
  })
  ;({ app, database } = t)
  alice = await registerUser(app, `alice_${randomBytes(3).toString('hex')}`)
  bob = await registerUser(app, `bob_${randomBytes(3).toString('hex')}`)
  video = (await createVideo(app, alice.auth)).id
  hidden = (await createVideo(app, alice.auth, { visibility: 'private' })).id
})

afterAll(() => t.close())

/** Waits until the flush made PostgreSQL match `expected` (the flush runs in the background). */
async function dbEventually(id: string, expected: Record<string, number>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const { rows } = await sql<Record<string, string>>`
      select like_count::int as likes, favorite_count::int as favorites, play_count::int as plays,
        (select count(*)::int from video_likes where video_id = ${id}) as like_rows,
        (select count(*)::int from video_favorites where video_id = ${id}) as favorite_rows,
        (select count(*)::int from video_plays where video_id = ${id}) as play_rows
      from videos where id = ${id}`.execute(database.db)
    const row = Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]))
    const matches = Object.entries(expected).every(([k, v]) => row[k] === v)
    if (matches || Date.now() > deadline) return row
    await sleep(50)
  }
}

describe('likes and favourites', () => {
  it('PUT/DELETE like is idempotent and reaches PostgreSQL through the flush', async () => {
    const put = () => app.inject({ method: 'PUT', url: `/videos/${video}/like`, headers: bob.auth })
    const first = await put()
    expect(first.statusCode).toBe(200)
    expect(first.json()).toEqual({ videoId: video, liked: true, likeCount: 1 })
    expect((await put()).json()).toEqual({ videoId: video, liked: true, likeCount: 1 })
    expect(await dbEventually(video, { likes: 1, like_rows: 1 })).toMatchObject({ likes: 1, like_rows: 1 })

    const del = () => app.inject({ method: 'DELETE', url: `/videos/${video}/like`, headers: bob.auth })
    expect((await del()).json()).toEqual({ videoId: video, liked: false, likeCount: 0 })
    expect((await del()).json()).toEqual({ videoId: video, liked: false, likeCount: 0 })
    expect(await dbEventually(video, { likes: 0, like_rows: 0 })).toMatchObject({ likes: 0, like_rows: 0 })
  })

  it('50 concurrent double clicks over HTTP count once', async () => {
    const clicks = await Promise.all(
      Array.from({ length: 100 }, () =>
        app.inject({ method: 'PUT', url: `/videos/${video}/favorite`, headers: alice.auth }),
      ),
    )
    expect(clicks.every((r) => r.statusCode === 200)).toBe(true)
    expect(new Set(clicks.map((r) => r.json().favoriteCount))).toEqual(new Set([1]))
    expect(await dbEventually(video, { favorites: 1, favorite_rows: 1 })).toMatchObject({
      favorites: 1,
      favorite_rows: 1,
    })
  })

  it('needs a user, a live video the caller may see, and an id in range', async () => {
    expect((await app.inject({ method: 'PUT', url: `/videos/${video}/like` })).statusCode).toBe(401)
    expect(
      (await app.inject({ method: 'PUT', url: '/videos/999999999/like', headers: bob.auth })).statusCode,
    ).toBe(404)
    expect(
      (await app.inject({ method: 'PUT', url: `/videos/${hidden}/like`, headers: bob.auth })).statusCode,
    ).toBe(404)
    expect(
      (await app.inject({ method: 'PUT', url: `/videos/${hidden}/like`, headers: alice.auth })).statusCode,
    ).toBe(200)
    const big = await app.inject({
      method: 'PUT',
      url: '/videos/99999999999999999999/like',
      headers: bob.auth,
    })
    expect(big.statusCode).toBe(400)
    const del = await app.inject({ method: 'DELETE', url: `/videos/${video}`, headers: alice.auth })
    expect(del.statusCode).toBe(204)
    expect(
      (await app.inject({ method: 'PUT', url: `/videos/${video}/like`, headers: bob.auth })).statusCode,
    ).toBe(404)
    video = (await createVideo(app, alice.auth)).id
  })
})

describe('a deleted video', () => {
  it('leaves no interaction key in Redis, and a like or play after the delete is a 404 that creates none', async () => {
    const doomed = (await createVideo(app, alice.auth)).id
    const keys = app.interactions.keys
    const headers = { ...bob.auth, 'user-agent': 'D' }
    for (const [method, url] of [
      ['PUT', 'like'],
      ['PUT', 'favorite'],
      ['POST', 'play'],
    ] as const)
      expect((await app.inject({ method, url: `/videos/${doomed}/${url}`, headers })).statusCode).toBe(200)
    const [seconds, micros] = await app.redis.time()
    // the test app's 300 ms dedupe window: its seen-set keys expire within 600 ms, so not counted
    // below, but looked for after the delete
    const g = Math.floor((Number(seconds) * 1000 + Number(micros) / 1000) / 300)
    const p = keys.partitionOf(doomed)
    const names = [
      keys.likes(doomed),
      keys.memberMeta('likes', doomed),
      keys.favorites(doomed),
      keys.memberMeta('favorites', doomed),
      keys.plays(doomed),
      ...[g - 2, g - 1, g, g + 1].flatMap((n) => [
        `${keys.playSeenPrefix(doomed)}${n}:n`,
        `${keys.playSeenPrefix(doomed)}${n}:0`,
      ]),
    ]
    const exists = () =>
      Promise.all(names.map((k) => app.redis.exists(k))).then((e) => e.filter(Boolean).length)
    const ranked = () => app.redis.zscore(keys.rankAll(p, 'likes'), doomed.padStart(20, '0'))
    expect(await exists()).toBeGreaterThanOrEqual(3) // likes, favourites, the play counter
    expect(await ranked()).toBe('1')

    expect(
      (await app.inject({ method: 'DELETE', url: `/videos/${doomed}`, headers: alice.auth })).statusCode,
    ).toBe(204)
    expect(await exists()).toBe(0)
    expect(await ranked()).toBeNull()
    // the database says deleted (404 before Redis); the tombstone answers the racing call the same
    for (const [method, url] of [
      ['PUT', 'like'],
      ['DELETE', 'like'],
      ['PUT', 'favorite'],
      ['POST', 'play'],
    ] as const)
      expect((await app.inject({ method, url: `/videos/${doomed}/${url}`, headers })).statusCode).toBe(404)
    await expect(app.interactions.setLiked(doomed, bob.userId, true)).rejects.toMatchObject({
      code: 'FLOODGATE_ITEM_GONE',
    })
    expect(await exists()).toBe(0)
  })
})

describe('plays', () => {
  it('counts a viewer once per dedupe window; anonymous viewers by IP + user agent', async () => {
    const play = (headers: Record<string, string>) =>
      app.inject({ method: 'POST', url: `/videos/${video}/play`, headers })
    expect((await play({ 'user-agent': 'A' })).json()).toEqual({
      videoId: video,
      counted: true,
      playCount: 1,
    })
    expect((await play({ 'user-agent': 'A' })).json()).toMatchObject({ counted: false, playCount: 1 })
    expect((await play({ 'user-agent': 'B' })).json()).toMatchObject({ counted: true, playCount: 2 })
    expect((await play(bob.auth)).json()).toMatchObject({ counted: true, playCount: 3 })
    expect((await play(bob.auth)).json()).toMatchObject({ counted: false })
    await sleep(2 * 300 + 50) // counted again two window generations (of 300 ms) on: 300 to 600 ms later
    expect((await play(bob.auth)).json()).toMatchObject({ counted: true, playCount: 4 })
    expect(await dbEventually(video, { plays: 4, play_rows: 4 })).toMatchObject({ plays: 4, play_rows: 4 })
    const hiddenPlay = await app.inject({ method: 'POST', url: `/videos/${hidden}/play` })
    expect(hiddenPlay.statusCode).toBe(404)
  })

  it('publishes the flush lag metrics on /metrics', async () => {
    const text = (await app.inject({ method: 'GET', url: '/metrics' })).body
    for (const name of [
      'length',
      'pending',
      'oldest_pending_age_seconds',
      'applied_total',
      'dead_lettered_total',
    ])
      expect(text).toContain(`floodgate_interactions_flush_${name}`)
    expect(text).toMatch(/floodgate_interactions_flush_applied_total\{group="flush"\} [1-9]/)
  })
})

describe('Redis unavailable', () => {
  it('answers 503 with a problem body, never 500', async () => {
    const dead = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    })
    const offline = await secondInstance(t, { redis: dead })
    try {
      const res = await offline.inject({ method: 'PUT', url: `/videos/${video}/like`, headers: bob.auth })
      expect(res.statusCode).toBe(503)
      expect(res.json()).toMatchObject({ code: 'UNAVAILABLE' })
    } finally {
      await offline.close()
      dead.disconnect()
    }
  })
})
