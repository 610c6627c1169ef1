// Issue 31: what each route answers while PostgreSQL cannot be reached (the table in
// docs/operations.md, "When PostgreSQL is down"): never a 500; a request that needs PostgreSQL is
// a 503 UNAVAILABLE with Retry-After; what the cache and Redis can answer still answers; writes
// of likes, favourites and plays go on, on the signed token alone. One in-process app whose pool
// reaches the shared server through a proxy the test breaks (support/pg_proxy.ts: the server
// itself is never stopped). Server only: PGlite runs in process and has no connection to lose.
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../src/app.js'
import { createTokenService } from '../src/auth/tokens.js'
import { openPostgres } from '../src/db/connect.js'
import { DB_UNREACHABLE_RETRY_AFTER_S } from '../src/db/unreachable.js'
import { TEST_JWT_SECRET } from './support/app.js'
import { createTestDatabase, type TestDatabase, testDbKind } from './support/database.js'
import { PgProxy } from './support/pg_proxy.js'
import { deleteByPrefix, plainTestRedisClient } from './support/redis.js'

const skip = testDbKind === 'pglite'
/** AUTH_KNOWN_USER_TTL_MS of the app (ms): short, so the test outlasts it in a fraction of a second. */
const CONFIRM_WINDOW_MS = 200
const redis = plainTestRedisClient()
const prefix = `vatest:pgroutes:${process.pid}:${randomBytes(3).toString('hex')}`
let database: TestDatabase | undefined
let proxied: Awaited<ReturnType<typeof openPostgres>> | undefined
let proxy: PgProxy | undefined
let app: FastifyInstance | undefined

interface Users {
  admin: string
  author: string
  /** Liked before the outage: confirmed by the instance. */
  confirmed: string
  /** Registered, never wrote. */
  fresh: string
}
const users = {} as Record<keyof Users, { id: string; auth: { authorization: string } }>
const newVideo = {
  title: 't',
  coverUrl: 'https://c.example/1.jpg',
  playUrl: 'http://v.example/1.mp4',
  status: 'published',
}
let cachedId = ''
let coldId = ''

async function register(a: FastifyInstance, name: string) {
  const res = await a.inject({
    method: 'POST',
    url: '/auth/register',
    payload: { username: `${name}_${randomBytes(3).toString('hex')}`, password: 'correct-horse' },
  })
  expect(res.statusCode).toBe(201)
  const body = res.json<{ userId: string; token: string }>()
  return { id: body.userId, auth: { authorization: `Bearer ${body.token}` } }
}

beforeAll(async () => {
  if (skip) return
  database = await createTestDatabase('pgroutes')
  proxy = await PgProxy.start()
  proxied = await openPostgres({ url: proxy.url(), schema: database.schema })
  const build = (adminUserIds: string[]) =>
    buildApp({
      db: proxied!.db,
      redis,
      redisPrefix: prefix,
      jwtSecret: TEST_JWT_SECRET,
      cache: true,
      counters: { adminUserIds },
      knownUserTtlMs: CONFIRM_WINDOW_MS,
    })
  const first = await build([])
  const admin = await register(first, 'admin')
  await first.close()
  app = await build([admin.id])
  users.admin = admin
  for (const name of ['author', 'confirmed', 'fresh'] as const) users[name] = await register(app, name)
  const ids: string[] = []
  for (let i = 0; i < 2; i++) {
    const res = await app.inject({
      method: 'POST',
      url: '/videos',
      headers: users.author.auth,
      payload: { ...newVideo, title: `v${i}` },
    })
    expect(res.statusCode, res.body).toBe(201)
    ids.push(res.json<{ id: string }>().id)
  }
  ;[cachedId, coldId] = ids as [string, string]
  await app.videoCache!.rebuilt
  // warm: the cached video, its counts, the feed; the confirmed user's like, then its window passes
  for (const url of [`/videos/${cachedId}`, `/videos/${cachedId}/stats`, '/feed/recommend'])
    expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200)
  const like = await app.inject({
    method: 'PUT',
    url: `/videos/${cachedId}/like`,
    headers: users.confirmed.auth,
  })
  expect(like.statusCode).toBe(200)
}, 60_000)

afterAll(async () => {
  await app?.close()
  await proxy?.close()
  await proxied?.close()
  await database?.close()
  await deleteByPrefix(redis, `${prefix}:`)
  redis.disconnect()
})

type Who = keyof Users | 'anonymous' | 'ghost'

/** [method, url, who, status while PostgreSQL is unreachable] */
type Row = [string, string, Who, number]

describe.skipIf(skip)('every route while PostgreSQL cannot be reached', () => {
  it('answers from the cache and Redis where it can, 503 UNAVAILABLE with Retry-After elsewhere, never 500', async () => {
    const a = app!
    // a validly signed token of a user the database does not have (deleted by hand, say)
    const ghostToken = createTokenService(TEST_JWT_SECRET, 3600, a.installationId).issue('999999999')
    const headersOf = (who: Who) =>
      who === 'anonymous' ? {} : who === 'ghost' ? { authorization: `Bearer ${ghostToken}` } : users[who].auth
    const absentId = String(Number(coldId) + 1000)
    const rows: Row[] = [
      ['GET', '/healthz', 'anonymous', 200],
      ['GET', '/readyz', 'anonymous', 503],
      ['GET', '/metrics', 'anonymous', 200],
      ['GET', '/docs/json', 'anonymous', 200],
      ['POST', '/auth/register', 'anonymous', 503],
      ['POST', '/auth/login', 'anonymous', 503],
      ['GET', `/videos/${cachedId}`, 'anonymous', 200],
      ['GET', `/videos/${coldId}`, 'anonymous', 503],
      ['GET', `/videos/${absentId}`, 'anonymous', 404],
      ['GET', `/videos/${cachedId}/stats`, 'confirmed', 200],
      ['GET', `/videos/${coldId}/stats`, 'anonymous', 503],
      ['GET', '/feed/recommend', 'anonymous', 200],
      ['GET', `/users/${users.author.id}/videos`, 'anonymous', 503],
      ['GET', '/me/likes', 'confirmed', 503],
      ['GET', '/me/favorites', 'confirmed', 503],
      ['GET', '/rankings/hot', 'anonymous', 503],
      ['GET', '/rankings/hot?window=1h', 'anonymous', 503],
      ['PUT', `/videos/${cachedId}/like`, 'confirmed', 200],
      ['DELETE', `/videos/${cachedId}/like`, 'confirmed', 200],
      ['PUT', `/videos/${cachedId}/like`, 'fresh', 200],
      ['PUT', `/videos/${cachedId}/favorite`, 'fresh', 200],
      ['DELETE', `/videos/${cachedId}/favorite`, 'fresh', 200],
      ['POST', `/videos/${cachedId}/play`, 'fresh', 200],
      ['POST', `/videos/${cachedId}/play`, 'anonymous', 200],
      ['PUT', `/videos/${cachedId}/like`, 'ghost', 200],
      ['PUT', `/videos/${coldId}/like`, 'fresh', 503],
      ['POST', `/videos/${coldId}/play`, 'anonymous', 503],
      ['POST', '/videos', 'author', 503],
      ['PATCH', `/videos/${cachedId}`, 'author', 503],
      ['DELETE', `/videos/${cachedId}`, 'author', 503],
      ['POST', '/admin/rebuild/bloom', 'admin', 503],
      ['POST', '/admin/rebuild/counters', 'admin', 503],
      ['GET', '/admin/reconcile', 'admin', 503],
    ]
    const payloads: Record<string, unknown> = {
      'POST /auth/register': { username: 'during_outage', password: 'correct-horse' },
      'POST /auth/login': { username: 'during_outage', password: 'correct-horse' },
      'POST /videos': newVideo,
      [`PATCH /videos/${cachedId}`]: { title: 'renamed' },
    }
    // before: the ghost is refused while the database can say it does not exist
    const before = await a.inject({
      method: 'PUT',
      url: `/videos/${cachedId}/like`,
      headers: headersOf('ghost'),
    })
    expect(before.statusCode).toBe(401)

    // the confirmed user's confirmation has expired by now: the outage outlasts the window
    await new Promise((resolve) => setTimeout(resolve, CONFIRM_WINDOW_MS))
    await proxy!.break()
    const got: Row[] = []
    const bad: string[] = []
    try {
      for (const [method, url, who] of rows) {
        const res = await a.inject({
          method: method as 'GET',
          url,
          headers: headersOf(who),
          ...(payloads[`${method} ${url}`] ? { payload: payloads[`${method} ${url}`] as object } : {}),
        })
        got.push([method, url, who, res.statusCode])
        if (res.statusCode === 503 && url !== '/readyz') {
          const problem = res.json<{ code: string }>()
          if (
            res.headers['retry-after'] !== String(DB_UNREACHABLE_RETRY_AFTER_S) ||
            problem.code !== 'UNAVAILABLE'
          )
            bad.push(`${method} ${url}: ${res.headers['retry-after']} ${res.body}`)
        }
      }
    } finally {
      await proxy!.restore()
    }
    expect(got).toEqual(rows)
    expect(bad, '503 without Retry-After or not UNAVAILABLE').toEqual([])

    // back: the same requests that needed PostgreSQL answer again, and the ghost is refused again
    for (const url of [`/videos/${coldId}`, `/users/${users.author.id}/videos`, '/me/likes', '/readyz']) {
      const res = await a.inject({ method: 'GET', url, headers: users.confirmed.auth })
      expect(res.statusCode, url).toBe(200)
    }
    // the user check probes the database again at most a second after the outage (KnownUsers)
    await new Promise((resolve) => setTimeout(resolve, 1_100))
    const after = await a.inject({
      method: 'PUT',
      url: `/videos/${cachedId}/like`,
      headers: headersOf('ghost'),
    })
    expect(after.statusCode).toBe(401)
  }, 60_000)
})
