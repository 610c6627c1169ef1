import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import type { RedisClient } from 'floodgate'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { VideoCacheSettings } from '../src/cache/settings.js'
import { createTestApp, createVideo, registerUser, secondInstance, type TestApp } from './support/app.js'
import { dbQueries } from './support/metrics_text.js'
import { expectRateLimited } from './support/rate_limited.js'

// GET /videos/:id goes on while Redis makes its rate-limit decision (`overlapsRateLimit`): the
// cache's Redis reads overlap the decision's round trip, and nothing reaches PostgreSQL or the
// client before the decision admits the request. Exact mode: every decision is Redis's (the
// default, leased, makes a key's first decision per slice in Redis, the same way).
const quotas = {
  user: { limit: 100, windowMs: 60_000 },
  anonymous: { limit: 100, windowMs: 60_000 },
  write: { limit: 100, windowMs: 60_000 },
  auth: { limit: 100, windowMs: 60_000 },
  routes: { 'GET /videos/:id': { limit: 1, windowMs: 60_000 } },
}

let t: TestApp
let videoIds: string[]

beforeAll(async () => {
  t = await createTestApp('rl-overlap')
  const owner = await registerUser(t.app, `owner_${randomBytes(3).toString('hex')}`)
  videoIds = []
  for (let i = 0; i < 4; i++) videoIds.push((await createVideo(t.app, owner.auth)).id)
})

afterAll(async () => {
  await t.close()
})

/**
 * An instance with the cache on (settings) or off, limiting on `prefix` with {@link quotas} in
 * exact mode, once its start-up Bloom rebuild has settled (that rebuild reads PostgreSQL).
 */
async function instance(prefix: string, cache: boolean | VideoCacheSettings): Promise<FastifyInstance> {
  // failClosed answers 429 when Redis is slower than timeoutMs: roomy, so a loaded machine cannot fake a limit
  const app = await secondInstance(t, {
    cache,
    rateLimit: { prefix, quotas, fallback: 'failClosed', timeoutMs: 10_000, mode: 'exact' },
  })
  await app.videoCache?.rebuilt
  return app
}

/** Records the order in which `redis` sends commands and gets their replies (until `stop()`). */
function recordRedis(redis: RedisClient) {
  const events: { kind: 'sent' | 'replied'; args: string }[] = []
  type Send = (command: unknown, ...rest: unknown[]) => unknown
  const target = redis as unknown as { sendCommand: Send }
  const original = target.sendCommand.bind(redis)
  target.sendCommand = (command, ...rest) => {
    const c = command as unknown as { args: unknown[]; promise: Promise<unknown> }
    const args = c.args.map(String).join(' ')
    events.push({ kind: 'sent', args })
    c.promise.then(
      () => events.push({ kind: 'replied', args }),
      () => {},
    )
    return original(command, ...rest)
  }
  return {
    events,
    stop: () => {
      target.sendCommand = original
    },
  }
}

describe('GET /videos/:id while Redis decides its rate limit', () => {
  it("sends the cache's read of a cold video before the decision's reply", async () => {
    const limiterPrefix = `${t.prefix}:rl-${randomBytes(3).toString('hex')}`
    // untracked L1: the L2 reads go on the app's client, the one recorded (not the tracking pair's)
    const app = await instance(limiterPrefix, { l1Tracking: false })
    const id = videoIds[0]!
    // a first read syncs the instance's Bloom replica: later reads ask it in process
    await app.inject({ method: 'GET', url: `/videos/${videoIds[3]}`, remoteAddress: '198.51.100.19' })
    const recorder = recordRedis(t.redis)
    const res = await app.inject({ method: 'GET', url: `/videos/${id}`, remoteAddress: '198.51.100.20' })
    recorder.stop()
    expect(res.statusCode).toBe(200)
    expect(res.json()).toMatchObject({ id })
    expect(res.headers['ratelimit-policy']).toBe('"GET /videos/:id";q=1;w=60')
    const { events } = recorder
    const decisionSent = events.findIndex((e) => e.kind === 'sent' && e.args.includes(limiterPrefix))
    const decisionReplied = events.findIndex((e) => e.kind === 'replied' && e.args.includes(limiterPrefix))
    // the read path's first step: the Bloom gate's sync when the replica's bits say absent (its
    // rebuild at start may still run), else the video's L2 read; the decision's call leaves with
    // the poll phase's batch, so the read may even go first
    const readSent = events.findIndex(
      (e) => e.kind === 'sent' && (e.args.includes(`{${id}}`) || e.args.includes(':bloom:')),
    )
    expect(decisionSent).toBeGreaterThanOrEqual(0)
    expect(events.some((e) => e.kind === 'sent' && e.args.includes(`{${id}}`))).toBe(true)
    expect(readSent).toBeLessThan(decisionReplied)
  })

  it('answers a refused request the same 429, with no load, no lock left and no 400 for a bad id', async () => {
    const limiterPrefix = `${t.prefix}:rl-${randomBytes(3).toString('hex')}`
    // the quota is spent on one instance; the others hear the refusal from Redis (not from memory)
    const spender = await instance(limiterPrefix, true)
    const cached = await instance(limiterPrefix, true)
    const uncached = await instance(limiterPrefix, false)
    let n = 0
    const spentAddress = async () => {
      const ip = `198.51.100.${100 + n++}`
      const res = await spender.inject({ method: 'GET', url: `/videos/${videoIds[3]}`, remoteAddress: ip })
      expect(res.statusCode).toBe(200)
      return ip
    }
    for (const [app, id] of [
      [cached, videoIds[1]!],
      [uncached, videoIds[2]!],
    ] as const) {
      const before = await dbQueries(app)
      const url = `/videos/${id}`
      const res = await app.inject({ method: 'GET', url, remoteAddress: await spentAddress() })
      expectRateLimited(res, 'GET /videos/:id', '"GET /videos/:id";q=1;w=60', url)
      expect(await dbQueries(app)).toBe(before)
      const badId = await app.inject({ method: 'GET', url: '/videos/0', remoteAddress: await spentAddress() })
      expect(badId.statusCode).toBe(429)
    }
    // the refused read's lock claim was given back: the next instance to read the video loads it at once
    expect(await t.redis.exists(`${t.prefix}:c:video:{${videoIds[1]}}:lock`)).toBe(0)
  })
})
