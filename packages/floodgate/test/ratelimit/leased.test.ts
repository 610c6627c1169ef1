import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it, vi } from 'vitest'
import {
  createRateLimiter,
  createRedisClient,
  DEADLINE_DEFAULTS,
  InvalidArgumentError,
  KeySpace,
  type RateLimiterOptions,
  type RateLimitResult,
  type RedisClient,
  rateLimitHeaders,
  rateLimitKeys,
} from '../../src/index.js'
import { blockLoop } from '../support/busy_loop.js'
import {
  deadRedisClient,
  deleteByPrefix,
  readyProductionClient,
  testRedisClient,
  uniquePrefix,
} from '../support/redis.js'
import { PrivateRedis } from '../support/redis_server.js'

// The leased mode in one process against real Redis: one Redis call per slice, slices sized
// by the quota nobody holds, headers never above the quota left, slices dying with their window
// and given back, concurrent decisions sharing one lease call, and the fallback policy when Redis
// is down (a slice already held keeps admitting: its units are reserved).
const LIMIT = 100

const redis = testRedisClient()
const prefix = uniquePrefix('rl-leased')
const keySpace = new KeySpace(prefix)

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

let n = 0
const leased = (patch: Partial<RateLimiterOptions> = {}) =>
  createRateLimiter({
    redis,
    prefix: keySpace,
    name: `p${n++}`,
    algorithm: 'fixedWindow',
    limit: LIMIT,
    windowMs: 60_000,
    // a loaded 2-core box; the outage cases below use their own clients
    timeoutMs: 2000,
    fallback: 'failClosed',
    mode: 'leased',
    ...patch,
  })

/** Slices a fresh key's quota goes through with a fraction of 1/4 (the default). */
function expectedSlices(limit: number): number[] {
  const slices: number[] = []
  for (let free = limit; free > 0; ) {
    const slice = Math.min(free, Math.max(1, Math.ceil(free / 4)))
    slices.push(slice)
    free -= slice
  }
  return slices
}

async function sleepToWindowStart(windowMs: number, marginMs: number): Promise<void> {
  const [s, us] = await redis.time()
  const into = (Number(s) * 1000 + Math.floor(Number(us) / 1000)) % windowMs
  if (into > windowMs - marginMs) await sleep(windowMs - into + 20)
}

describe('leased mode', () => {
  it.each(['fixedWindow', 'slidingWindow'] as const)(
    '%s: spends the quota with one Redis call per slice, then refuses from memory',
    async (algorithm) => {
      await sleepToWindowStart(60_000, 5000)
      const limiter = leased({ algorithm })
      const results: RateLimitResult[] = []
      for (let i = 0; i < LIMIT; i++) results.push(await limiter.limit('spend'))
      expect(results.every((r) => r.allowed)).toBe(true)
      const calls = results.filter((r) => r.source === 'redis').length
      expect(calls).toBe(expectedSlices(LIMIT).length) // 14 for 100, in place of 100
      expect(results.filter((r) => r.source === 'lease')).toHaveLength(LIMIT - calls)
      // remaining: exact on the answer that took a slice, the slice left on the others; never above the quota left
      results.forEach((r, i) => {
        expect(r.remaining).toBeLessThanOrEqual(LIMIT - i - 1)
        if (r.source === 'redis') expect(r.remaining).toBe(LIMIT - i - 1)
        expect(rateLimitHeaders(r).RateLimit).toMatch(/^"p\d+";r=\d+;t=\d+$/)
      })
      const refused = await limiter.limit('spend')
      expect([refused.allowed, refused.source, refused.remaining]).toEqual([false, 'redis', 0])
      expect(refused.retryAfterMs).toBeGreaterThan(0)
      const cached = await limiter.limit('spend')
      expect([cached.allowed, cached.source]).toEqual([false, 'blockedCache'])
      expect(rateLimitHeaders(cached)['Retry-After']).toMatch(/^\d+$/)
    },
  )

  it('limitLocal answers from the slice and from a remembered refusal, each reported as a decision', async () => {
    await sleepToWindowStart(60_000, 5000)
    const limiter = leased({ limit: 8 }) // slices of 2, 2, 1…
    const decisions: string[] = []
    limiter.events.on('decision', ({ source, allowed }) => decisions.push(`${source}:${allowed}`))
    expect(limiter.limitLocal('local')).toBeUndefined()
    expect(decisions).toEqual([])
    await limiter.limit('local')
    const fromSlice = limiter.limitLocal('local')
    expect([fromSlice?.allowed, fromSlice?.source, fromSlice?.remaining]).toEqual([true, 'lease', 0])
    expect(limiter.limitLocal('local')).toBeUndefined() // slice spent: Redis must be asked
    while ((await limiter.limit('local')).allowed);
    const blocked = limiter.limitLocal('local')
    expect([blocked?.allowed, blocked?.source]).toEqual([false, 'blockedCache'])
    expect(decisions.slice(0, 2)).toEqual(['redis:true', 'lease:true'])
    expect(decisions.slice(-2)).toEqual(['redis:false', 'blockedCache:false'])
  })

  it('answers concurrent decisions on a key with one lease call between them', async () => {
    const limiter = leased()
    const results = await Promise.all(Array.from({ length: 60 }, () => limiter.limit('together')))
    expect(results.every((r) => r.allowed)).toBe(true)
    // 25 + 19 + 14 + 11 ≥ 60: four calls (one per slice), not 60
    expect(results.filter((r) => r.source === 'redis')).toHaveLength(4)
  })

  it('reserves at least a weighted cost', async () => {
    const limiter = leased()
    const big = await limiter.limit('weighted', { cost: 40 })
    expect([big.allowed, big.source, big.remaining]).toEqual([true, 'redis', 60])
    const small = await limiter.limit('weighted')
    expect(small.source).toBe('redis') // the 40-unit slice was spent whole
    const never = await limiter.limit('weighted', { cost: LIMIT + 1 })
    expect([never.allowed, never.retryAfterMs]).toEqual([false, -1])
  })

  it.each(['fixedWindow', 'slidingWindow'] as const)(
    '%s: a slice dies with its window and its unused units go back with the next lease call',
    async (algorithm) => {
      const windowMs = 500
      await sleepToWindowStart(windowMs, 200)
      const limiter = leased({ algorithm, windowMs })
      const first = await limiter.limit('expiry') // slice of 25, 24 left
      expect(first.source).toBe('redis')
      const keys = rateLimitKeys(keySpace, limiter.policy, 'expiry')
      const firstIndex = Math.floor(first.nowMs / windowMs)
      const counterOf = async (index: number) => Number((await redis.get(keys[index % keys.length]!)) ?? '0')
      expect(await counterOf(firstIndex)).toBe(25)
      await sleep(windowMs - (first.nowMs % windowMs) + 20)
      const next = await limiter.limit('expiry')
      expect(next.source).toBe('redis') // not the dead slice
      expect(Math.floor(next.nowMs / windowMs)).toBe(firstIndex + 1)
      if (algorithm === 'slidingWindow') expect(await counterOf(firstIndex)).toBe(1) // 24 given back
      expect(await counterOf(firstIndex + 1)).toBe(25)
    },
  )

  it('release() gives every live slice back; reset() forgets the slice', async () => {
    await sleepToWindowStart(60_000, 5000)
    const limiter = leased()
    for (let i = 0; i < 3; i++) await limiter.limit('release-a')
    await limiter.limit('release-b')
    expect(await limiter.release()).toBe(22 + 24)
    const counter = async (key: string) =>
      Number((await redis.get(rateLimitKeys(keySpace, limiter.policy, key)[0]!)) ?? '0')
    expect([await counter('release-a'), await counter('release-b')]).toEqual([3, 1])
    expect((await limiter.limit('release-a')).source).toBe('redis')
    expect(await limiter.release()).toBe(24)
    await limiter.limit('release-a')
    await limiter.reset('release-a')
    expect(await counter('release-a')).toBe(0)
    const after = await limiter.limit('release-a')
    expect([after.source, after.remaining]).toEqual(['redis', LIMIT - 1])
  })

  it('rejects the algorithms and options it cannot run', () => {
    for (const algorithm of ['tokenBucket', 'gcra', 'slidingLog'] as const)
      expect(() => leased({ algorithm })).toThrow(InvalidArgumentError)
    expect(() => leased({ lease: { fraction: 0 } })).toThrow(/lease\.fraction/)
    expect(() => leased({ lease: { maxKeys: 0 } })).toThrow(/lease\.maxKeys/)
    expect(() => leased({ mode: 'local' as 'leased' })).toThrow(/mode/)
  })
})

// `lease.prefetch`: the decision that spends a key's slice sends the key's next lease call, so
// the next decision finds a slice (no wait for Redis); the quota stays exact (every unit reserved
// in Redis is admitted once or given back) and a refused prefetch is remembered as a block.
const prefetching = (patch: Partial<RateLimiterOptions> = {}) =>
  leased({ lease: { prefetch: true }, ...patch })

describe('leased mode, prefetch', () => {
  it.each(['fixedWindow', 'slidingWindow'] as const)(
    '%s: a spent slice is renewed before the next decision, which answers from memory',
    async (algorithm) => {
      await sleepToWindowStart(60_000, 5000)
      const limiter = prefetching({ algorithm })
      const first = await limiter.limit('k')
      expect([first.allowed, first.source]).toEqual([true, 'redis'])
      const results: RateLimitResult[] = [first]
      for (;;) {
        let local = limiter.limitLocal('k')
        // a slice just spent: its successor is on its way (never without prefetch)
        for (let tries = 0; local === undefined && tries < 100; tries++) {
          await sleep(10)
          local = limiter.limitLocal('k')
        }
        if (local === undefined) throw new Error(`no slice after ${results.length} decisions`)
        results.push(local)
        if (!local.allowed) break
      }
      // every unit of the quota came from memory after the first call, then a remembered refusal
      expect(results.filter((r) => r.allowed)).toHaveLength(LIMIT)
      expect(results.slice(1, LIMIT).every((r) => r.source === 'lease')).toBe(true)
      const last = results[results.length - 1]!
      expect([last.allowed, last.source]).toEqual([false, 'blockedCache'])
      expect((await limiter.peek('k')).remaining).toBe(0)
    },
  )

  it('without it, the decision after a spent slice waits for a lease call', async () => {
    await sleepToWindowStart(60_000, 5000)
    const limiter = leased()
    const first = await limiter.limit('k') // a slice of 25
    const spent = Array.from({ length: 24 }, () => limiter.limitLocal('k'))
    expect([first.source, ...spent.map((r) => r?.source)]).toEqual(['redis', ...Array(24).fill('lease')])
    await sleep(20)
    expect(limiter.limitLocal('k')).toBeUndefined()
  })

  it('two instances on one key: never more admitted than the limit, no unit lost', async () => {
    await sleepToWindowStart(60_000, 5000)
    const name = `shared${n++}`
    const [a, b] = [prefetching({ name }), prefetching({ name })]
    let admitted = 0
    for (let round = 0; round < 40; round++) {
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? a : b).limit('k')))
      admitted += results.filter((r) => r.allowed).length
    }
    expect(admitted).toBeLessThanOrEqual(LIMIT)
    // what either instance still holds goes back: Redis then counts exactly the admitted units
    await Promise.all([a.release(), b.release()])
    expect((await a.peek('k')).remaining).toBe(LIMIT - admitted)
  })
})

describe('leased mode while Redis is down', () => {
  it('answers with the fallback policy, as the exact mode does', async () => {
    const dead = deadRedisClient()
    const make = (fallback: RateLimiterOptions['fallback']) =>
      leased({ redis: dead, fallback, startupWaitMs: 1, timeoutMs: 50 })
    const open = await make('failOpen').limit('down')
    const closed = await make('failClosed').limit('down')
    const insurance = make({ insurance: { share: 0.5 } })
    const insured = [await insurance.limit('down'), await insurance.limit('down')]
    expect([open.allowed, open.source]).toEqual([true, 'failOpen'])
    expect([closed.allowed, closed.source]).toEqual([false, 'failClosed'])
    expect(insured.map((r) => [r.allowed, r.source, r.limit])).toEqual([
      [true, 'insurance', 50],
      [true, 'insurance', 50],
    ])
  })

  it('answers concurrent decisions within the deadline while Redis does not answer (paused)', async () => {
    const server = await PrivateRedis.start()
    const client = createRedisClient(server.url, { commandTimeoutMs: 50 })
    client.on('error', () => {})
    const admin = new Redis(server.port, '127.0.0.1')
    try {
      await new Promise((resolve) => client.once('ready', resolve))
      const limiter = leased({ redis: client, timeoutMs: 50 })
      await admin.client('PAUSE', 1500, 'ALL')
      const started = performance.now()
      // one lease call in flight for the key: its 20 waiters share its timeout, not 20 in a row
      const results = await Promise.all(Array.from({ length: 20 }, () => limiter.limit('paused')))
      const elapsedMs = performance.now() - started
      expect(results.map((r) => [r.allowed, r.source])).toEqual(Array(20).fill([false, 'failClosed']))
      expect(elapsedMs).toBeLessThan(50 + 250) // a busy 2-core box: bounded, not fast
    } finally {
      await sleep(1500) // let the pause end
      admin.disconnect()
      client.disconnect()
      await server.destroy()
    }
  })

  it('gives back the slice of a lease call answered after its decision fell back', async () => {
    const server = await PrivateRedis.start()
    // the client waits 5 s; the limiter's deadline (50 ms of idle loop) is what gives up
    const client = createRedisClient(server.url, { commandTimeoutMs: 5000 })
    client.on('error', () => {})
    const admin = new Redis(server.port, '127.0.0.1')
    try {
      await new Promise((resolve) => client.once('ready', resolve))
      const limiter = leased({ redis: client, timeoutMs: 50 })
      const counter = rateLimitKeys(keySpace, limiter.policy, 'late')[0]!
      await admin.client('PAUSE', 300, 'ALL') // a stalled Redis: the script runs when it resumes
      const during = await limiter.limit('late')
      expect([during.allowed, during.source]).toEqual([false, 'failClosed'])
      await sleep(600)
      // the slice of 25 reserved after the pause went back: the quota is whole again
      expect(Number((await admin.get(counter)) ?? '0')).toBe(0)
    } finally {
      admin.disconnect()
      client.disconnect()
      await server.destroy()
    }
  })

  it('gives back the slice of a lease call whose reply the client dropped while the loop was blocked', async () => {
    // the defaults: the client's commandTimeout (2,000 ms), the limiter's deadline (50 ms of idle
    // loop, 2,000 ms at most); Redis answers at once, the reply waits in the socket
    const client = await readyProductionClient()
    const limiter = leased({ redis: client, timeoutMs: DEADLINE_DEFAULTS.timeoutMs })
    const counter = rateLimitKeys(keySpace, limiter.policy, 'dropped')[0]!
    try {
      const decision = limiter.limit('dropped')
      await new Promise((resolve) => setImmediate(resolve)) // the poll phase's batch of lease calls leaves
      blockLoop(DEADLINE_DEFAULTS.maxWaitMs + 300)
      const during = await decision
      expect([during.allowed, during.source]).toEqual([false, 'failClosed'])
      // the slice of 25 the script reserved went back: the quota is whole again
      await vi.waitFor(async () => expect(Number((await redis.get(counter)) ?? '0')).toBe(0), {
        timeout: 2000,
      })
      const next = await limiter.limit('dropped')
      expect([next.allowed, next.source, next.remaining]).toEqual([true, 'redis', LIMIT - 1])
    } finally {
      client.disconnect()
    }
  })

  it('keeps admitting from a slice taken before the outage, then falls back', async () => {
    const client: RedisClient = await readyProductionClient()
    const limiter = leased({ redis: client, timeoutMs: 50 })
    const fallbacks: unknown[] = []
    limiter.events.on('fallback', (event) => fallbacks.push(event))
    const first = await limiter.limit('outage')
    expect([first.allowed, first.source]).toEqual([true, 'redis'])
    client.disconnect()
    const during: RateLimitResult[] = []
    for (let i = 0; i < 25; i++) during.push(await limiter.limit('outage'))
    expect(during.slice(0, 24).every((r) => r.allowed && r.source === 'lease')).toBe(true)
    expect([during[24]!.allowed, during[24]!.source]).toEqual([false, 'failClosed'])
    expect(fallbacks).toHaveLength(1)
  })
})
