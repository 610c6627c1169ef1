import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { VideoReader } from '../src/videos/reader.js'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'

// A GET /videos/:id that misses L1 needs the video (L2 or the database) and then its counts:
// the counts read goes out with the first, not after it (one round trip less per cold read).
let t: TestApp
/** Per load of the SQL reader: were the video's anonymous counts kept in process when it ended? */
const countsKeptAtLoadEnd = new Map<string, boolean>()

/** A reader whose loads take 300 ms more, each noting whether the counts arrived meanwhile. */
function slowLoads(reader: VideoReader): VideoReader {
  return {
    getById: async (id, options) => {
      const video = await reader.getById(id, options)
      await sleep(300)
      countsKeptAtLoadEnd.set(id, t.app.counters.live.peek(id) !== undefined)
      return video
    },
    listByAuthor: (...args) => reader.listByAuthor(...args),
    recommend: (limit) => reader.recommend(limit),
  }
}

beforeAll(async () => {
  t = await createTestApp('counts_prefetch', {
    wrapReader: slowLoads,
    // a generous Redis timeout: the test machine is shared and busy
    cache: { redisTimeoutMs: 1000, rebuildBloomAtStart: true, bloomBits: 100_000, bloomHashes: 7 },
  })
}, 60_000)

afterAll(() => t.close())

/** A video the replica's bits hold, read by nobody yet (out of every cache tier). */
async function coldVideo(title: string): Promise<string> {
  const owner = await registerUser(t.app, `prefetch_${title}`)
  const { id } = await createVideo(t.app, owner.auth, { title })
  // a create invalidates the video's cache entry: it is read from the database next
  await until(() => t.app.videoCache?.replica.localAnswer(id) === true, { what: `the replica has ${id}` })
  return id
}

describe('counts read alongside a cold video read', () => {
  it('an anonymous read: its counts are in process before the load ends', async () => {
    const id = await coldVideo('anonymous')
    const res = await t.app.inject({ method: 'GET', url: `/videos/${id}` })
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id, likeCount: 0, favoriteCount: 0, playCount: 0 })
    expect(countsKeptAtLoadEnd.get(id)).toBe(true)
  })

  it('not for a viewer (its flags need their own read) nor for an id the bits call absent', async () => {
    const id = await coldVideo('viewer')
    const viewer = await registerUser(t.app, 'prefetch_reader')
    const res = await t.app.inject({ method: 'GET', url: `/videos/${id}`, headers: viewer.auth })
    expect(res.statusCode).toBe(200)
    expect(countsKeptAtLoadEnd.get(id)).toBe(false)
    const live = t.app.counters.live
    const idsBefore = live.stats.redisIds
    expect((await t.app.inject({ method: 'GET', url: '/videos/987654321987' })).statusCode).toBe(404)
    expect(live.stats.redisIds).toBe(idsBefore)
  })
})
