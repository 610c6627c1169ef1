import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createRateLimiter,
  createRedisClient,
  type RateLimiter,
  type RateLimitFallback,
  type RedisClient,
} from '../../src/index.js'
import { PrivateRedis } from '../support/redis_server.js'

// Test 3: a private Redis is paused (black hole) and killed mid-run. Each fallback policy
// answers as documented, no decision waits much more than timeoutMs, and Redis decisions
// resume (scripts reloaded by one EVAL after NOSCRIPT) when the server is back.
const TIMEOUT_MS = 50
const SLACK_MS = 150 // a busy 2-core box; the point is "bounded", not "fast"
const LIMIT = 5

let server: PrivateRedis
let client: RedisClient
let limiters: Record<'open' | 'closed' | 'insurance', RateLimiter>
const storeErrors: unknown[] = []

beforeAll(async () => {
  server = await PrivateRedis.start()
  client = createRedisClient(server.url, { commandTimeoutMs: TIMEOUT_MS })
  client.on('error', () => {}) // connection errors are expected here; the limiter reports them via onStoreError
  await new Promise((resolve) => client.once('ready', resolve))
  const make = (name: string, fallback: RateLimitFallback) =>
    createRateLimiter({
      redis: client,
      prefix: 'outage',
      name,
      algorithm: 'slidingWindow',
      limit: LIMIT,
      windowMs: 60_000,
      timeoutMs: TIMEOUT_MS,
      fallback,
      onStoreError: (error) => storeErrors.push(error),
    })
  limiters = {
    open: make('open', 'failOpen'),
    closed: make('closed', 'failClosed'),
    insurance: make('insurance', { insurance: { share: 0.4 } }), // 2 of 5 per instance
  }
})

afterAll(async () => {
  client.disconnect()
  await server.destroy()
})

async function timed(limiter: RateLimiter, key: string) {
  const started = performance.now()
  const result = await limiter.limit(key)
  return { result, ms: performance.now() - started }
}

async function expectPolicies(phase: string) {
  const runs = { open: [], closed: [], insurance: [] } as Record<
    keyof typeof limiters,
    Awaited<ReturnType<typeof timed>>[]
  >
  for (const name of ['open', 'closed', 'insurance'] as const) {
    for (let i = 0; i < 4; i++) runs[name].push(await timed(limiters[name], `${phase}-user`))
  }
  const all = Object.values(runs).flat()
  expect(Math.max(...all.map((r) => r.ms))).toBeLessThan(TIMEOUT_MS + SLACK_MS)
  expect(runs.open.map((r) => [r.result.allowed, r.result.source])).toEqual(Array(4).fill([true, 'failOpen']))
  expect(runs.closed.map((r) => [r.result.allowed, r.result.source])).toEqual(
    Array(4).fill([false, 'failClosed']),
  )
  expect(runs.closed[0]!.result.retryAfterMs).toBeGreaterThan(0)
  expect(runs.insurance.map((r) => [r.result.allowed, r.result.source])).toEqual([
    [true, 'insurance'],
    [true, 'insurance'],
    [false, 'insurance'],
    [false, 'insurance'],
  ])
  expect(runs.insurance[0]!.result.limit).toBe(2)
}

describe('Redis outage', () => {
  it('decides on Redis while it is up', async () => {
    for (const limiter of Object.values(limiters)) {
      const { result } = await timed(limiter, 'up-user')
      expect([result.allowed, result.source]).toEqual([true, 'redis'])
    }
  })

  it('applies each policy within the timeout while Redis does not answer (paused)', async () => {
    const admin = new Redis(server.port, '127.0.0.1')
    await admin.client('PAUSE', 1500, 'ALL')
    try {
      await expectPolicies('paused')
    } finally {
      admin.disconnect()
      await sleep(1500) // let the pause end
    }
  })

  it('applies each policy at once while Redis is down, then resumes Redis decisions', async () => {
    await server.kill()
    await sleep(50)
    const before = storeErrors.length
    await expectPolicies('killed')
    expect(storeErrors.length).toBeGreaterThanOrEqual(before + 12)

    await server.start() // empty script cache: the first call hits NOSCRIPT and reloads once
    const deadline = Date.now() + 10_000
    let result = (await timed(limiters.closed, 'back-user')).result
    while (result.source !== 'redis' && Date.now() < deadline) {
      await sleep(50)
      result = (await timed(limiters.closed, 'back-user')).result
    }
    expect([result.allowed, result.source]).toEqual([true, 'redis'])
    for (const limiter of Object.values(limiters)) {
      const after = await limiter.limit('back-user-2')
      expect([after.allowed, after.source, after.remaining]).toEqual([true, 'redis', LIMIT - 1])
    }
  })

  it('an insurance share given as a function follows it (1 / live instances)', async () => {
    let instances = 2
    const limiter = createRateLimiter({
      redis: client,
      prefix: 'outage',
      name: 'per-instance',
      algorithm: 'slidingWindow',
      limit: 10,
      windowMs: 60_000,
      timeoutMs: TIMEOUT_MS,
      fallback: { insurance: { share: () => 1 / instances } },
    })
    const admitted = async (key: string) => {
      let n = 0
      for (let i = 0; i < 12; i++) if ((await limiter.limit(key)).allowed) n++
      return n
    }
    await server.kill()
    try {
      expect(await admitted('a')).toBe(5)
      instances = 5
      expect(await admitted('b')).toBe(2)
    } finally {
      await server.start()
    }
  })
})
