import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'

let t: TestApp
let alice: Awaited<ReturnType<typeof registerUser>>
let bob: Awaited<ReturnType<typeof registerUser>>

beforeAll(async () => {
  t = await createTestApp('videos')
  alice = await registerUser(t.app, 'alice_v')
  bob = await registerUser(t.app, 'bob_v')
})
afterAll(() => t.close())

const get = (id: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: `/videos/${id}`, headers })

describe('video CRUD', () => {
  it('creates with defaults (draft, public) and returns the documented shape', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/videos',
      headers: alice.auth,
      payload: { title: 'First', coverUrl: 'https://c.example/1.jpg', playUrl: 'http://v.example/1.mp4' },
    })
    expect(res.statusCode).toBe(201)
    const video = res.json<Record<string, unknown>>()
    expect(res.headers.location).toBe(`/videos/${video.id}`)
    expect(Object.keys(video).sort()).toEqual(
      [
        'id',
        'authorId',
        'title',
        'description',
        'coverUrl',
        'playUrl',
        'visibility',
        'status',
        'likeCount',
        'favoriteCount',
        'playCount',
        'createdAt',
        'updatedAt',
      ].sort(),
    )
    expect(video).toMatchObject({
      authorId: alice.userId,
      status: 'draft',
      visibility: 'public',
      description: '',
      likeCount: 0,
    })
    expect(video.id).toMatch(/^[1-9]\d*$/)
  })

  it('reads, updates (owner only) and soft-deletes (owner only)', async () => {
    const video = await createVideo(t.app, alice.auth)
    expect((await get(video.id)).json()).toEqual(video)

    const byBob = await t.app.inject({
      method: 'PATCH',
      url: `/videos/${video.id}`,
      headers: bob.auth,
      payload: { title: 'Hijack' },
    })
    expect(byBob.statusCode).toBe(403)
    expect(byBob.json<{ code: string }>().code).toBe('FORBIDDEN')

    const patched = await t.app.inject({
      method: 'PATCH',
      url: `/videos/${video.id}`,
      headers: alice.auth,
      payload: { title: 'Renamed', description: 'd' },
    })
    expect(patched.statusCode).toBe(200)
    expect(patched.json()).toMatchObject({ title: 'Renamed', description: 'd', coverUrl: video.coverUrl })

    expect(
      (await t.app.inject({ method: 'DELETE', url: `/videos/${video.id}`, headers: bob.auth })).statusCode,
    ).toBe(403)
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/videos/${video.id}`, headers: alice.auth })).statusCode,
    ).toBe(204)
    expect((await get(video.id)).statusCode).toBe(404)
    expect((await get(video.id, alice.auth)).statusCode).toBe(404)
    expect(
      (await t.app.inject({ method: 'DELETE', url: `/videos/${video.id}`, headers: alice.auth })).statusCode,
    ).toBe(404)
    const row = await t.database.db
      .selectFrom('videos')
      .select(['deleted_at', 'title'])
      .where('id', '=', video.id)
      .executeTakeFirstOrThrow()
    expect(row.deleted_at).not.toBeNull()
    expect(row.title).toBe('Renamed')
  })

  it('hides private and draft videos from everyone but the owner (404, no existence leak)', async () => {
    const priv = await createVideo(t.app, alice.auth, { visibility: 'private' })
    const draft = await createVideo(t.app, alice.auth, { status: 'draft' })
    for (const v of [priv, draft]) {
      expect((await get(v.id)).statusCode).toBe(404)
      expect((await get(v.id, bob.auth)).statusCode).toBe(404)
      expect((await get(v.id, alice.auth)).statusCode).toBe(200)
      const patch = await t.app.inject({
        method: 'PATCH',
        url: `/videos/${v.id}`,
        headers: bob.auth,
        payload: { title: 'x' },
      })
      expect(patch.statusCode).toBe(404)
    }
    const missing = await get('999999999')
    expect(missing.json<{ detail: string }>().detail).toBe(
      (await get(priv.id)).json<{ detail: string }>().detail,
    )
  })

  it('runs onVideoChanged hooks after each write (the invalidation seam)', async () => {
    const seen: string[] = []
    t.app.videoWriter.onVideoChanged((id, change) => {
      seen.push(`${change}:${id}`)
    })
    const v = await createVideo(t.app, bob.auth)
    await t.app.inject({
      method: 'PATCH',
      url: `/videos/${v.id}`,
      headers: bob.auth,
      payload: { status: 'draft' },
    })
    await t.app.inject({ method: 'DELETE', url: `/videos/${v.id}`, headers: bob.auth })
    expect(seen).toEqual([`created:${v.id}`, `updated:${v.id}`, `deleted:${v.id}`])
  })
})

describe('feed', () => {
  it('returns the latest 20 published public live videos, newest first', async () => {
    const made = []
    for (let i = 0; i < 22; i++) made.push(await createVideo(t.app, bob.auth))
    const hidden = [
      await createVideo(t.app, bob.auth, { visibility: 'private' }),
      await createVideo(t.app, bob.auth, { status: 'draft' }),
    ]
    const deleted = await createVideo(t.app, bob.auth)
    await t.app.inject({ method: 'DELETE', url: `/videos/${deleted.id}`, headers: bob.auth })
    const res = await t.app.inject({ method: 'GET', url: '/feed/recommend' })
    expect(res.statusCode).toBe(200)
    const ids = res.json<{ items: { id: string }[] }>().items.map((v) => v.id)
    expect(ids).toEqual(
      made
        .slice(-20)
        .reverse()
        .map((v) => v.id),
    )
    for (const v of [...hidden, deleted]) expect(ids).not.toContain(v.id)
  })
})

describe('operations', () => {
  it('serves healthz, readyz, metrics with the latency histogram, and the OpenAPI document', async () => {
    expect((await t.app.inject('/healthz')).json()).toEqual({ status: 'ok' })
    expect((await t.app.inject('/readyz')).json()).toEqual({ status: 'ready', db: 'ok', redis: 'ok' })
    const metrics = (await t.app.inject('/metrics')).body
    expect(metrics).toContain('process_cpu_user_seconds_total')
    expect(metrics).toMatch(
      /http_request_duration_seconds_bucket\{[^}]*route="\/videos\/:id"[^}]*status="404"/,
    )
    const doc = (await t.app.inject('/docs/json')).json<{ openapi: string; paths: Record<string, unknown> }>()
    expect(doc.openapi).toMatch(/^3\./)
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/videos',
        '/videos/{id}',
        '/users/{id}/videos',
        '/feed/recommend',
        '/auth/login',
      ]),
    )
  })
})
