import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '@floodgate/test-support'
import type { FastifyInstance } from 'fastify'
import { BloomFilter } from 'floodgate'
import { Redis } from 'ioredis'
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BloomRebuildReport } from '../src/cache/install.js'
import { type LocalRedis, startLocalRedis } from '../src/redis/local_server.js'
import {
  createAdminTestApp,
  createVideo,
  registerUser,
  secondInstance,
  type TestApp,
  type TestUser,
} from './support/app.js'
import { heldSource } from './support/held_source.js'
import { dbQueries } from './support/metrics_text.js'

// POST /admin/rebuild/bloom on real PostgreSQL and Redis. The filter is not built at start here:
// only the admin route builds it, so what the gate answers afterwards is the route's doing.
const BLOOM = { bloomBits: 100_000, bloomHashes: 7 }
const CACHE = { ...BLOOM, rebuildBloomAtStart: false, redisTimeoutMs: 1000 }

const rebuild = (app: FastifyInstance, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: '/admin/rebuild/bloom', headers })

/** A Lua script that keeps Redis busy for `ms` (ms). */
const busyLoop = (ms: number) =>
  `local s = redis.call('TIME') repeat local n = redis.call('TIME') until (n[1] - s[1]) * 1e6 + n[2] - s[2] > ${ms * 1000} return 1`

describe('POST /admin/rebuild/bloom (shared Redis)', () => {
  let t: TestApp
  let app: FastifyInstance
  let admin: TestUser
  let user: TestUser
  const videos: string[] = []
  const bloomOf = () =>
    new BloomFilter({
      redis: t.redis,
      prefix: t.prefix,
      name: 'videos',
      bits: BLOOM.bloomBits,
      hashes: BLOOM.bloomHashes,
    })

  beforeAll(async () => {
    const built = await createAdminTestApp('admin_bloom', { cache: CACHE })
    t = built
    ;({ app, admin } = built)
    user = await registerUser(app, 'bloom_user')
    for (let i = 0; i < 3; i++) videos.push((await createVideo(app, user.auth)).id)
    const gone = await createVideo(app, user.auth)
    expect(
      (await app.inject({ method: 'DELETE', url: `/videos/${gone.id}`, headers: user.auth })).statusCode,
    ).toBe(204)
  }, 60_000)

  afterAll(async () => {
    await t?.close()
  })

  it('401 without a token, 403 for a user not in ADMIN_USER_IDS; the filter stays unbuilt', async () => {
    const anonymous = await rebuild(app)
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json()).toMatchObject({ code: 'UNAUTHORIZED' })
    const notAdmin = await rebuild(app, user.auth)
    expect(notAdmin.statusCode).toBe(403)
    expect(notAdmin.json()).toMatchObject({ code: 'FORBIDDEN' })
    expect(await bloomOf().isReady()).toBe(false)
  })

  it('builds the filter from PostgreSQL: then a missing id is a 404 without a DB query, live ids are found', async () => {
    // not built yet: the gate answers "maybe", so a missing id reaches the database
    const before = await dbQueries(app)
    expect((await app.inject({ method: 'GET', url: '/videos/800000001' })).statusCode).toBe(404)
    expect(await dbQueries(app)).toBeGreaterThan(before)

    const res = await rebuild(app, admin.auth)
    expect(res.statusCode, res.body).toBe(200)
    const body = res.json<BloomRebuildReport>()
    // the three live videos; the deleted one is not a live id
    expect(body).toMatchObject({ items: 3, bits: BLOOM.bloomBits, hashes: BLOOM.bloomHashes, shards: 1 })
    expect(body.generation).toBeGreaterThanOrEqual(1)
    expect(body.durationMs).toBeGreaterThanOrEqual(0)

    const quiet = await dbQueries(app)
    for (let i = 0; i < 20; i++)
      expect((await app.inject({ method: 'GET', url: `/videos/${800_000_100 + i}` })).statusCode).toBe(404)
    expect(await dbQueries(app)).toBe(quiet)
    for (const id of videos)
      expect((await app.inject({ method: 'GET', url: `/videos/${id}` })).statusCode).toBe(200)
  })

  it('409 while another instance holds the rebuild lock; 200 with a newer generation once it is done', async () => {
    // "another instance": its own filter object on the same keys, rebuilding from a source we hold open
    const other = bloomOf()
    const held = heldSource(videos)
    const otherRebuild = other.rebuild(held.source)
    await held.reading
    const locked = await rebuild(app, admin.auth)
    expect(locked.statusCode).toBe(409)
    expect(locked.json()).toMatchObject({ code: 'CONFLICT' })
    held.release()
    const theirs = await otherRebuild
    const ours = await rebuild(app, admin.auth)
    expect(ours.statusCode, ours.body).toBe(200)
    expect(ours.json<BloomRebuildReport>().generation).toBeGreaterThan(theirs.generation)
  })

  it('two rebuilds at once never run together: each answer is 200 or 409, and two 200s ran one after the other', async () => {
    const answers = await Promise.all([rebuild(app, admin.auth), rebuild(app, admin.auth)])
    const ok = answers.filter((r) => r.statusCode === 200).map((r) => r.json<BloomRebuildReport>())
    expect(answers.every((r) => r.statusCode === 200 || r.statusCode === 409)).toBe(true)
    expect(ok.length).toBeGreaterThanOrEqual(1)
    if (ok.length === 2) expect(ok[0]!.generation).not.toBe(ok[1]!.generation)
    for (const r of ok) expect(r.items).toBe(3)
  })

  it('503 (not 500) when PostgreSQL fails mid-rebuild; the served generation keeps answering', async () => {
    await sql`alter table videos rename to videos_away`.execute(t.database.db)
    try {
      const res = await rebuild(app, admin.auth)
      expect(res.statusCode, res.body).toBe(503)
      expect(res.json().detail).toMatch(/PostgreSQL/)
    } finally {
      await sql`alter table videos_away rename to videos`.execute(t.database.db)
    }
    const quiet = await dbQueries(app)
    expect((await app.inject({ method: 'GET', url: '/videos/800000200' })).statusCode).toBe(404)
    expect(await dbQueries(app)).toBe(quiet)
  })

  it('400 on a query parameter (the route takes none: `?mode=replace` is not silently ignored)', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/admin/rebuild/bloom?mode=replace',
      headers: admin.auth,
    })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' })
  })

  it('404 on an instance without the read cache', async () => {
    const uncached = await secondInstance(t, { counters: { adminUserIds: [admin.userId] } })
    try {
      const res = await rebuild(uncached, admin.auth)
      expect(res.statusCode).toBe(404)
      expect(res.json().detail).toMatch(/read cache is off/)
    } finally {
      await uncached.close()
    }
  })

  it('is in the OpenAPI document with its responses', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/docs/json' })).json()
    const op = doc.paths['/admin/rebuild/bloom'].post
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '409', '503']))
    expect(Object.keys(op.responses['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['items', 'durationMs', 'generation', 'bits', 'hashes', 'shards']),
    )
  })
})

describe('POST /admin/rebuild/bloom (private Redis: slow, then down)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'va-admin-bloom-'))
  let port: number
  let server: LocalRedis
  let redis: Redis
  let t: TestApp
  let app: FastifyInstance
  let admin: TestUser

  beforeAll(async () => {
    port = await freePort()
    server = await startLocalRedis(dir, port)
    redis = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 })
    redis.on('error', () => {})
    const built = await createAdminTestApp('admin_bloom_down', {
      redis,
      cache: { ...CACHE, bloomRebuildTimeoutMs: 200 },
    })
    t = built
    ;({ app, admin } = built)
  }, 60_000)

  afterAll(async () => {
    await t?.close()
    redis?.disconnect()
    await server?.stop()
    rmSync(dir, { recursive: true, force: true })
  })

  it('503 when Redis does not answer the rebuild in time (connected but busy)', async () => {
    const blocker = new Redis(`redis://127.0.0.1:${port}`)
    const ms = 1500
    const busy = blocker.eval(busyLoop(ms), 0)
    try {
      await sleep(50)
      const res = await rebuild(app, admin.auth)
      expect(res.statusCode, res.body).toBe(503)
      expect(res.json()).toMatchObject({ code: 'UNAVAILABLE' })
    } finally {
      await busy
      blocker.disconnect()
    }
  })

  it('a rebuild longer than CONNECTION_TIMEOUT_MS still answers over a real socket (bloom and counters)', async () => {
    // the socket idles past the idle timeout (100 ms) while the rebuild runs: the answer must still come
    const slow = await createAdminTestApp('admin_bloom_slow', {
      redis,
      cache: { ...CACHE, bloomRebuildTimeoutMs: 30_000 },
      connectionTimeoutMs: 100,
    })
    const blocker = new Redis(`redis://127.0.0.1:${port}`)
    try {
      const base = await slow.app.listen({ port: 0, host: '127.0.0.1' })
      for (const path of ['/admin/rebuild/bloom', '/admin/rebuild/counters']) {
        // Redis busy for 1 s: the rebuild's first command waits that long, the socket stays idle
        const busy = blocker.eval(busyLoop(1000), 0).catch(() => 0) // settled before the blocker disconnects
        await sleep(50)
        const res = await fetch(`${base}${path}`, { method: 'POST', headers: slow.admin.auth })
        expect(res.status, path).toBe(200)
        await busy
      }
    } finally {
      blocker.disconnect()
      await slow.close()
    }
  })

  it('503 at once when Redis is down', async () => {
    await server.stop()
    const deadline = Date.now() + 5000
    while (redis.status === 'ready' && Date.now() < deadline) await sleep(10)
    const res = await rebuild(app, admin.auth)
    expect(res.statusCode, res.body).toBe(503)
    expect(res.json()).toMatchObject({ code: 'UNAVAILABLE', detail: 'Redis is unavailable' })
  })
})
