import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { RedisClient } from 'floodgate'
import { type AppOptions, buildApp } from '../../src/app.js'
import { createTestDatabase, type TestDatabase } from './database.js'
import { deleteByPrefix, plainTestRedisClient } from './redis.js'

export { TEST_REDIS_URL } from './redis.js'
export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789'

/** What buildApp takes besides the harness's own (database, prefix, JWT secret), plus an optional Redis. */
export type TestAppOptions = Omit<AppOptions, 'db' | 'redis' | 'redisPrefix' | 'jwtSecret'> & {
  /**
   * A client the test owns (e.g. on a private server from startLocalRedis) instead of the shared
   * test Redis: `close()` neither deletes its keys nor disconnects it.
   */
  redis?: RedisClient
}

export interface TestApp {
  /** The app under test; `restart()` replaces it. */
  readonly app: FastifyInstance
  database: TestDatabase
  /** A `Cluster` when `FLOODGATE_TEST_REDIS_CLUSTER` is set (see ./redis.ts), or the test's own client. */
  redis: RedisClient
  /** Unique Redis key prefix of this app. */
  prefix: string
  /**
   * Closes `app` and builds it again on the same database, Redis and prefix with `options` (the
   * Redis override stays); e.g. with ADMIN_USER_IDS once the admin has registered.
   */
  restart(options?: Omit<TestAppOptions, 'redis'>): Promise<FastifyInstance>
  /** Closes the app and every `secondInstance`, deletes the prefix's keys and closes the clients it opened. */
  close(): Promise<void>
}

/** The instances secondInstance built on each test app, closed by its close(). */
const secondInstances = new WeakMap<TestApp, Set<FastifyInstance>>()

/** A user registered through the API (see registerUser). */
export type TestUser = Awaited<ReturnType<typeof registerUser>>

/**
 * The app on a fresh database (see createTestDatabase) and the shared Redis (or the test cluster,
 * or `options.redis`), under a unique key prefix; the other `options` go to buildApp.
 */
export async function createTestApp(label: string, options: TestAppOptions = {}): Promise<TestApp> {
  const { redis: ownRedis, ...appOptions } = options
  const database = await createTestDatabase(label)
  const redis = ownRedis ?? plainTestRedisClient()
  const prefix = `vatest:${label}:${process.pid}:${randomBytes(3).toString('hex')}`
  const build = (buildOptions: Omit<TestAppOptions, 'redis'>) =>
    buildApp({ db: database.db, redis, redisPrefix: prefix, jwtSecret: TEST_JWT_SECRET, ...buildOptions })
  let app = await build(appOptions)
  const instances = new Set<FastifyInstance>()
  const t: TestApp = {
    get app() {
      return app
    },
    database,
    redis,
    prefix,
    async restart(restartOptions = {}) {
      await app.close()
      app = await build(restartOptions)
      return app
    },
    async close() {
      // Fastify's close() is idempotent: instances the test closed already are fine here
      for (const instance of instances) await instance.close()
      await app.close()
      if (!ownRedis) {
        await deleteByPrefix(redis, prefix)
        redis.disconnect()
      }
      await database.close()
    },
  }
  secondInstances.set(t, instances)
  return t
}

/**
 * createTestApp with an admin: registers a user on a first app, then restarts it with that user's
 * id in `counters.adminUserIds` (ids come from the database, so the user must exist first).
 */
export async function createAdminTestApp(
  label: string,
  options: TestAppOptions = {},
): Promise<TestApp & { admin: TestUser }> {
  const t = await createTestApp(label, options)
  const admin = await registerUser(t.app, `admin_${randomBytes(4).toString('hex')}`)
  const { redis: _ownRedis, ...appOptions } = options
  await t.restart({ ...appOptions, counters: { ...options.counters, adminUserIds: [admin.userId] } })
  return Object.assign(t, { admin })
}

/**
 * Another instance of the app on `t`'s database, Redis and prefix; `t.close()` closes it too.
 * `options.redis` replaces `t.redis` for this instance (the caller's client: it closes it).
 */
export async function secondInstance(t: TestApp, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const app = await buildApp({
    db: t.database.db,
    redis: t.redis,
    redisPrefix: t.prefix,
    jwtSecret: TEST_JWT_SECRET,
    ...options,
  })
  secondInstances.get(t)?.add(app)
  await app.ready()
  return app
}

/** Registers a user and returns `{ userId, token, auth }` where `auth` is the header object. */
export async function registerUser(app: FastifyInstance, username: string, password = 'correct-horse') {
  const res = await app.inject({ method: 'POST', url: '/auth/register', payload: { username, password } })
  if (res.statusCode !== 201) throw new Error(`register ${username}: ${res.statusCode} ${res.body}`)
  const body = res.json<{ userId: string; token: string }>()
  return { userId: body.userId, token: body.token, auth: { authorization: `Bearer ${body.token}` } }
}

let counter = 0
/** Creates a video owned by the `auth` user; defaults to published and public. */
export async function createVideo(
  app: FastifyInstance,
  auth: Record<string, string>,
  fields: Record<string, unknown> = {},
): Promise<{ id: string; [k: string]: unknown }> {
  counter++
  const res = await app.inject({
    method: 'POST',
    url: '/videos',
    headers: auth,
    payload: {
      title: `Video ${counter}`,
      coverUrl: `https://cdn.example.com/c/${counter}.jpg`,
      playUrl: `https://cdn.example.com/v/${counter}.mp4`,
      status: 'published',
      visibility: 'public',
      ...fields,
    },
  })
  if (res.statusCode !== 201) throw new Error(`create video: ${res.statusCode} ${res.body}`)
  return res.json()
}
