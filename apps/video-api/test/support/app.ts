import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { Cluster, Redis } from 'ioredis'
import { type AppOptions, buildApp } from '../../src/app.js'
import { createTestDatabase, type TestDatabase } from './database.js'
import { deleteByPrefix, testRedisClient } from './redis.js'

export { TEST_REDIS_URL } from './redis.js'
export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret-0123456789'

export interface TestApp {
  app: FastifyInstance
  database: TestDatabase
  /** A `Cluster` when `FLOODGATE_TEST_REDIS_CLUSTER` is set (see ./redis.ts). */
  redis: Redis | Cluster
  /** Unique Redis key prefix of this app. */
  prefix: string
  close(): Promise<void>
}

/**
 * The app on a fresh database (see createTestDatabase) and the shared Redis (or the test cluster),
 * under a unique key prefix; `options` go to buildApp. `close()` closes the app, deletes the
 * prefix's keys and closes the clients.
 */
export async function createTestApp(
  label: string,
  options: Omit<AppOptions, 'db' | 'redis' | 'redisPrefix' | 'jwtSecret'> = {},
): Promise<TestApp> {
  const database = await createTestDatabase(label)
  const redis = testRedisClient()
  const prefix = `vatest:${label}:${process.pid}:${randomBytes(3).toString('hex')}`
  const app = await buildApp({
    db: database.db,
    redis,
    redisPrefix: prefix,
    jwtSecret: TEST_JWT_SECRET,
    ...options,
  })
  return {
    app,
    database,
    redis,
    prefix,
    async close() {
      await app.close()
      await deleteByPrefix(redis, prefix)
      redis.disconnect()
      await database.close()
    },
  }
}

/** Another instance of the app on `t`'s database and Redis prefix (the caller closes it). */
export async function secondInstance(
  t: TestApp,
  options: Omit<AppOptions, 'db' | 'redis' | 'redisPrefix' | 'jwtSecret'> = {},
): Promise<FastifyInstance> {
  const app = await buildApp({
    db: t.database.db,
    redis: t.redis,
    redisPrefix: t.prefix,
    jwtSecret: TEST_JWT_SECRET,
    ...options,
  })
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
