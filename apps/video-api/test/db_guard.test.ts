import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config/index.js'
import { createDbGuard, dbGuardFromConfig } from '../src/db/guard.js'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'
import { testDbKind } from './support/database.js'
import { metricSamples } from './support/metrics_text.js'
import { lockTable, type TableLock } from './support/table_lock.js'

let t: TestApp | undefined
let lock: TableLock | undefined
afterEach(async () => {
  await lock?.release().catch(() => {})
  lock = undefined
  await t?.close()
  t = undefined
})

/** until()'s options here, with `what` it waits for: a 10 ms poll, 10 s for a loaded machine. */
const poll = (what: string) => ({ what, timeoutMs: 10_000, everyMs: 10 })

async function metric(app: FastifyInstance, series: string): Promise<number> {
  const value = metricSamples((await app.inject({ method: 'GET', url: '/metrics' })).body).get(series)
  if (value === undefined) throw new Error(`no series ${series} on /metrics`)
  return value
}

const SHED_FULL = 'floodgate_guard_shed_total{guard="db",reason="queue_full"}'
const SHED_TIMEOUT = 'floodgate_guard_shed_total{guard="db",reason="queue_timeout"}'

describe('database guard config', () => {
  it('DB_GUARD_MAX_CONCURRENT defaults to DB_POOL_MAX; the queue to floodgate default (4 per slot)', () => {
    expect(dbGuardFromConfig(loadConfig({ env: { DB_POOL_MAX: '7' } }))).toEqual({
      maxConcurrent: 7,
      maxQueue: undefined,
      maxQueueWaitMs: 1000,
    })
    expect(
      dbGuardFromConfig(
        loadConfig({
          env: { DB_GUARD_MAX_CONCURRENT: '3', DB_GUARD_MAX_QUEUE: '0', DB_GUARD_QUEUE_TIMEOUT_MS: '250' },
        }),
      ),
    ).toEqual({ maxConcurrent: 3, maxQueue: 0, maxQueueWaitMs: 250 })
    expect(createDbGuard({ maxConcurrent: 7 }).options).toMatchObject({
      name: 'db',
      maxConcurrent: 7,
      maxQueue: 28,
      maxQueueWaitMs: 1000,
    })
  })
})

describe('database guard, defaults', () => {
  it('leaves a normal read path alone: every read answers, nothing shed, series on /metrics', async () => {
    t = await createTestApp('dbguard_def', { cache: true })
    const { app } = t
    expect(app.dbGuard.options).toMatchObject({ maxConcurrent: 10, maxQueue: 40, maxQueueWaitMs: 1000 })
    const owner = await registerUser(app, 'guard_def_owner')
    const ids: string[] = []
    for (let i = 0; i < 5; i++) ids.push((await createVideo(app, owner.auth)).id)
    const urls = [
      ...ids.flatMap((id) => [`/videos/${id}`, `/videos/${id}/stats`]),
      '/feed/recommend',
      `/users/${owner.userId}/videos`,
      '/rankings/hot',
    ]
    const replies = await Promise.all(
      Array.from({ length: 60 }, (_, i) => app.inject({ method: 'GET', url: urls[i % urls.length]! })),
    )
    expect(replies.map((r) => r.statusCode)).toEqual(replies.map(() => 200))
    expect(await metric(app, SHED_FULL)).toBe(0)
    expect(await metric(app, SHED_TIMEOUT)).toBe(0)
    expect(await metric(app, 'floodgate_guard_in_flight{guard="db"}')).toBe(0)
    expect(await metric(app, 'floodgate_guard_queue_wait_seconds_count{guard="db"}')).toBeGreaterThan(0)
  })
})

describe.skipIf(testDbKind === 'pglite')('database guard, PostgreSQL held (server only)', () => {
  it('sheds the reads past slots + queue with 503 problem+json and Retry-After; writes still work', async () => {
    t = await createTestApp('dbguard_shed', {
      cache: true,
      dbGuard: { maxConcurrent: 2, maxQueue: 1, maxQueueWaitMs: 1500 },
    })
    const { app } = t
    const guard = app.dbGuard
    const owner = await registerUser(app, 'guard_owner')
    const video = await createVideo(app, owner.auth)
    // GET /me/likes reads video_likes: held in PostgreSQL, it fills the guard's slots, then its queue.
    lock = await lockTable(t.database.schema!, 'video_likes')
    const held = [1, 2].map(() => app.inject({ method: 'GET', url: '/me/likes', headers: owner.auth }))
    await until(async () => (await lock!.waiting()) === 2, poll('2 reads stuck in PostgreSQL'))
    const queued = app.inject({ method: 'GET', url: '/me/likes', headers: owner.auth })
    await until(() => guard.queued === 1, poll('1 read queued'))

    for (const url of [`/videos/${video.id}`, `/users/${owner.userId}/videos`, '/me/likes']) {
      const started = performance.now()
      const res = await app.inject({ method: 'GET', url, headers: owner.auth })
      expect(performance.now() - started).toBeLessThan(500)
      expect(res.statusCode, url).toBe(503)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(res.headers['retry-after']).toBe('2')
      expect(res.json()).toMatchObject({ status: 503, code: 'OVERLOADED', instance: url })
    }
    expect(await metric(app, SHED_FULL)).toBe(3)
    expect(await metric(app, 'floodgate_guard_in_flight{guard="db"}')).toBe(2)
    expect(await metric(app, 'floodgate_guard_queued{guard="db"}')).toBe(1)
    expect(await lock.waiting()).toBe(2)

    // Writes pass while reads are shed: log in, create, change, like, play.
    const login = await app.inject({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'guard_owner', password: 'correct-horse' },
    })
    expect(login.statusCode).toBe(200)
    const created = await createVideo(app, owner.auth)
    const patch = await app.inject({
      method: 'PATCH',
      url: `/videos/${created.id}`,
      headers: owner.auth,
      payload: { title: 'changed while shedding' },
    })
    expect(patch.statusCode).toBe(200)
    const like = await app.inject({ method: 'PUT', url: `/videos/${video.id}/like`, headers: owner.auth })
    expect(like.statusCode).toBe(200)
    expect((await app.inject({ method: 'POST', url: `/videos/${video.id}/play` })).statusCode).toBe(200)

    // The queued read gives up after maxQueueWaitMs, never having reached PostgreSQL.
    const timedOut = await queued
    expect(timedOut.statusCode).toBe(503)
    expect(timedOut.json()).toMatchObject({ code: 'OVERLOADED' })
    expect(await metric(app, SHED_TIMEOUT)).toBe(1)
    expect(await lock.waiting()).toBe(2)

    await lock.release()
    lock = undefined
    for (const res of await Promise.all(held)) expect(res.statusCode).toBe(200)
    expect((await app.inject({ method: 'GET', url: `/videos/${video.id}` })).statusCode).toBe(200)
    expect(await metric(app, 'floodgate_guard_in_flight{guard="db"}')).toBe(0)
  })

  it('bounds the PostgreSQL statements of 200 concurrent reads of distinct uncached videos', async () => {
    const maxConcurrent = 3
    t = await createTestApp('dbguard_bound', {
      cache: true,
      dbGuard: { maxConcurrent, maxQueue: 500, maxQueueWaitMs: 60_000 },
    })
    const { app } = t
    const guard = app.dbGuard
    const owner = await registerUser(app, 'guard_bound_owner')
    const ids: string[] = []
    for (let batch = 0; batch < 10; batch++) {
      const created = await Promise.all(Array.from({ length: 20 }, () => createVideo(app, owner.auth)))
      ids.push(...created.map((v) => v.id))
    }
    lock = await lockTable(t.database.schema!, 'videos')
    const reads = ids.map((id) => app.inject({ method: 'GET', url: `/videos/${id}` }))
    await until(async () => (await lock!.waiting()) >= maxConcurrent, poll('reads stuck in PostgreSQL'))
    // Sampled for a while: the others wait in the guard, not in PostgreSQL or the pool.
    const samples: number[] = []
    for (let i = 0; i < 30; i++) {
      samples.push(await lock.waiting())
      await sleep(15)
    }
    expect(Math.max(...samples)).toBe(maxConcurrent)
    await until(() => guard.inFlight + guard.queued === ids.length, poll('every read at the guard'))
    expect(await lock.waiting()).toBe(maxConcurrent)
    expect([guard.inFlight, guard.queued]).toEqual([maxConcurrent, ids.length - maxConcurrent])
    await lock.release()
    lock = undefined
    const replies = await Promise.all(reads)
    expect(replies.map((r) => r.statusCode)).toEqual(ids.map(() => 200))
    expect(replies.map((r) => r.json<{ id: string }>().id)).toEqual(ids)
    expect(await metric(app, SHED_FULL)).toBe(0)
  })
})
