import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { Video } from '../src/http/schemas.js'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'

// GET /videos/:id writes its JSON itself (counters/video_json.ts, a cached video's text kept per
// object): the text must be what the Video schema's serializer gives, field for field and in order.
let t: TestApp

beforeAll(async () => {
  // the video cache on, so repeated reads hit the same cached object
  t = await createTestApp('videojson', { cache: true })
})
afterAll(() => t.close())

/** The video cache's outcome counters (`floodgate_cache_events_total{cache="video"}`). */
async function videoOutcomes(): Promise<Record<string, number>> {
  const metric = await t.app.metrics.getSingleMetric('floodgate_cache_events_total')!.get()
  const video = metric.values.filter((v) => v.labels.cache === 'video')
  return Object.fromEntries(video.map((v) => [String(v.labels.outcome), v.value]))
}

/** The Video schema's fields in its order, as fast-json-stringify writes them. */
function schemaText(v: Record<string, unknown>): string {
  const order = Object.keys(Video.properties)
  return JSON.stringify(Object.fromEntries(order.filter((k) => v[k] !== undefined).map((k) => [k, v[k]])))
}

describe('GET /videos/:id JSON', () => {
  it('is the schema serializer text, anonymous and with the viewer flags, cached or not', async () => {
    const { app } = t
    const owner = await registerUser(app, `vj_owner_${randomBytes(3).toString('hex')}`)
    const viewer = await registerUser(app, `vj_viewer_${randomBytes(3).toString('hex')}`)
    // quotes, a backslash, a control character and non-ASCII in the text fields
    const video = await createVideo(app, owner.auth, {
      title: 'a "quoted" \\ title – ünïcode 🎬',
      description: 'line one\nline two\ttab',
      status: 'published',
    })
    const like = await app.inject({ method: 'PUT', url: `/videos/${video.id}/like`, headers: viewer.auth })
    expect(like.statusCode).toBeLessThan(300)
    for (let round = 0; round < 2; round++) {
      const anonymous = await app.inject({ method: 'GET', url: `/videos/${video.id}` })
      expect(anonymous.statusCode).toBe(200)
      expect(anonymous.headers['content-type']).toBe('application/json; charset=utf-8')
      const body = anonymous.json<Record<string, unknown>>()
      expect(body).toMatchObject({ title: 'a "quoted" \\ title – ünïcode 🎬', likeCount: 1 })
      expect(body.liked).toBeUndefined()
      expect(anonymous.body).toBe(schemaText(body))

      const seen = await app.inject({ method: 'GET', url: `/videos/${video.id}`, headers: viewer.auth })
      const flagged = seen.json<Record<string, unknown>>()
      expect(flagged).toMatchObject({ likeCount: 1, liked: true, favorited: false })
      expect(seen.body).toBe(schemaText(flagged))
      expect(seen.body).toBe(schemaText({ ...body, liked: true, favorited: false }))
    }
  })

  it('a hot anonymous read is answered in process: no load, no counts read, the cold answer’s bytes', async () => {
    const { app } = t
    const owner = await registerUser(app, `vj_hot_${randomBytes(3).toString('hex')}`)
    const video = await createVideo(app, owner.auth, { status: 'published' })
    const url = `/videos/${video.id}`
    const cold = await app.inject({ method: 'GET', url })
    expect(cold.statusCode).toBe(200)
    const before = await videoOutcomes()
    const getById = vi.spyOn(app.videos, 'getById')
    const read = vi.spyOn(app.counters.live, 'read')
    try {
      const hot = await app.inject({ method: 'GET', url })
      expect(getById).not.toHaveBeenCalled()
      expect(read).not.toHaveBeenCalled()
      expect(await videoOutcomes()).toEqual({ ...before, l1_hit: (before.l1_hit ?? 0) + 1 })
      expect(hot.body).toBe(cold.body)
      const { date: _d, 'x-request-id': _h, ...hotHeaders } = hot.headers
      const { date: _c, 'x-request-id': _r, ...coldHeaders } = cold.headers
      expect(hotHeaders).toEqual(coldHeaders)
      // a viewer's flags are not kept in process: its counts are read, the video still from L1
      const viewer = await registerUser(app, `vj_hotv_${randomBytes(3).toString('hex')}`)
      const seen = await app.inject({ method: 'GET', url, headers: viewer.auth })
      expect(seen.json()).toMatchObject({ id: video.id, liked: false, favorited: false })
      expect(getById).not.toHaveBeenCalled()
      expect(read).toHaveBeenCalledTimes(1)
      // hidden from others: a 404 from the cached row too
      await app.inject({ method: 'PATCH', url, headers: owner.auth, payload: { visibility: 'private' } })
      await app.inject({ method: 'GET', url, headers: owner.auth }) // back in L1
      expect((await app.inject({ method: 'GET', url })).statusCode).toBe(404)
    } finally {
      getById.mockRestore()
      read.mockRestore()
    }
  })

  it('a hot anonymous answer follows its counts (the text kept per video is rebuilt when they change)', async () => {
    const { app } = t
    const owner = await registerUser(app, `vj_follow_${randomBytes(3).toString('hex')}`)
    const video = await createVideo(app, owner.auth, { status: 'published' })
    const url = `/videos/${video.id}`
    const read = async () => {
      const res = await app.inject({ method: 'GET', url })
      expect(res.statusCode).toBe(200)
      expect(res.body).toBe(schemaText(res.json()))
      return res.json<Record<string, unknown>>()
    }
    await read()
    expect(await read()).toMatchObject({ likeCount: 0, favoriteCount: 0 })
    const fans = [owner, await registerUser(app, `vj_fan_${randomBytes(3).toString('hex')}`)]
    for (const [i, fan] of fans.entries()) {
      await app.inject({ method: 'PUT', url: `${url}/like`, headers: fan.auth })
      expect(await read()).toMatchObject({ likeCount: i + 1, favoriteCount: 0 })
      expect(await read()).toMatchObject({ likeCount: i + 1 })
    }
    await app.inject({ method: 'PUT', url: `${url}/favorite`, headers: owner.auth })
    expect(await read()).toMatchObject({ likeCount: 2, favoriteCount: 1 })
    await app.inject({ method: 'DELETE', url: `${url}/like`, headers: owner.auth })
    const after = await read()
    expect(after).toMatchObject({ likeCount: 1, favoriteCount: 1 })
    expect(after.countsStale).toBeUndefined()
  })

  it('leaves other answers to the schema serializer (a 404 problem)', async () => {
    const missing = await t.app.inject({ method: 'GET', url: '/videos/999999999' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND' })
  })
})
