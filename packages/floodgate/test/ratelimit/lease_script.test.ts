import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { RedisTimeoutError } from '../../src/deadline/index.js'
import { KeySpace, type RateLimitPolicy, rateLimitKeys } from '../../src/index.js'
import { LeaseCalls, leaseGrantKeys, leaseReply } from '../../src/ratelimit/lease/lease_script.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// The lease scripts on their own (lua/lease-*.lua): slice sizing, reservation in the window
// counter, refusal, give-back to the current and previous window, stale give-backs ignored,
// grants recorded by id and cancelled (before or after they ran).
const LIMIT = 100
const WINDOW_MS = 60_000
const FRACTION = 0.25

const redis = testRedisClient()
const prefix = uniquePrefix('rl-lease-lua')
const keySpace = new KeySpace(prefix)
const policyOf = (algorithm: 'fixedWindow' | 'slidingWindow'): RateLimitPolicy => ({
  name: algorithm,
  algorithm,
  limit: LIMIT,
  windowMs: WINDOW_MS,
  burst: LIMIT,
})

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

// every case runs well inside one window: none may straddle an edge
beforeEach(async () => {
  const [s, us] = await redis.time()
  const intoWindow = (Number(s) * 1000 + Math.floor(Number(us) / 1000)) % WINDOW_MS
  if (intoWindow > WINDOW_MS - 3000) await sleep(WINDOW_MS - intoWindow + 50)
})

let keyCounter = 0
const freshKey = () => `k${keyCounter++}`

describe.each(['fixedWindow', 'slidingWindow'] as const)('lease script, %s', (algorithm) => {
  const policy = policyOf(algorithm)
  const lease = new LeaseCalls(redis, keySpace, policy, FRACTION, 1)
  const counterOf = async (key: string, windowIndex: number) => {
    const keys = rateLimitKeys(keySpace, policy, key)
    return Number((await redis.get(keys[windowIndex % keys.length]!)) ?? '0')
  }

  it('reserves a quarter of the free quota per call until none is left, then refuses', async () => {
    const key = freshKey()
    let free = LIMIT
    let reserved = 0
    while (free > 0) {
      const reply = await lease.call(key, 1, 0, -1)
      const expected = Math.min(free, Math.max(1, Math.ceil(free * FRACTION)))
      expect([reply.granted, reply.slice, reply.free]).toEqual([true, expected, free - expected])
      expect(reply.retryAfterMs).toBe(0)
      expect(reply.windowIndex).toBe(Math.floor(reply.nowMs / WINDOW_MS))
      free -= expected
      reserved += expected
      expect(await counterOf(key, reply.windowIndex)).toBe(reserved)
    }
    expect(reserved).toBe(LIMIT)
    const refused = await lease.call(key, 1, 0, -1)
    expect([refused.granted, refused.slice, refused.free]).toEqual([false, 0, 0])
    expect(refused.retryAfterMs).toBeGreaterThan(0)
    expect(refused.retryAfterMs).toBeLessThanOrEqual(2 * WINDOW_MS)
    expect(await counterOf(key, refused.windowIndex)).toBe(LIMIT) // nothing reserved on refusal
  })

  it('reserves at least the cost, and refuses a cost above the limit for good', async () => {
    const key = freshKey()
    const big = await lease.call(key, 40, 0, -1)
    expect([big.granted, big.slice, big.free]).toEqual([true, 40, 60])
    const never = await lease.call(key, LIMIT + 1, 0, -1)
    expect([never.granted, never.slice, never.free, never.retryAfterMs]).toEqual([false, 0, 60, -1])
    const tooMuch = await lease.call(key, 61, 0, -1)
    expect([tooMuch.granted, tooMuch.free]).toEqual([false, 60])
    expect(tooMuch.retryAfterMs).toBeGreaterThan(0)
  })

  it('takes back unused units of the current window before reserving, never below 0', async () => {
    const key = freshKey()
    const first = await lease.call(key, 1, 0, -1) // 25 reserved
    const settled = await lease.call(key, 0, 10, first.windowIndex) // cost 0: give back only
    expect([settled.granted, settled.slice, settled.free]).toEqual([true, 0, 85])
    expect(await counterOf(key, first.windowIndex)).toBe(15)
    const again = await lease.call(key, 1, 5, first.windowIndex) // 10 held, then ceil(90 / 4)
    expect([again.slice, again.free]).toEqual([23, 67])
    expect(await counterOf(key, first.windowIndex)).toBe(33)
    const clamped = await lease.call(key, 0, 1000, first.windowIndex)
    expect(clamped.free).toBe(LIMIT)
    expect(await counterOf(key, first.windowIndex)).toBe(0)
  })

  it('cancels a recorded grant: its slice goes back once, and the record leaves with the window', async () => {
    const key = freshKey()
    const granted = await lease.call(key, 1, 0, -1, 'inst:1')
    expect([granted.granted, granted.slice]).toEqual([true, 25])
    await lease.call(key, 1, 0, -1, 'inst:2') // another grant of the key, kept
    expect(await counterOf(key, granted.windowIndex)).toBe(25 + 19)
    const cancelled = await lease.call(key, 0, 0, -1, '', 'inst:1')
    expect([cancelled.granted, cancelled.slice, cancelled.free]).toEqual([true, 0, LIMIT - 19])
    expect(await counterOf(key, granted.windowIndex)).toBe(19)
    await lease.call(key, 0, 0, -1, '', 'inst:1') // twice: nothing more goes back
    expect(await counterOf(key, granted.windowIndex)).toBe(19)
    const [grants] = leaseGrantKeys(keySpace, policy, key).filter(
      (_, i, all) => all.length === 1 || i === granted.windowIndex % 2,
    )
    const ttl = await redis.pexpiretime(grants!)
    expect(ttl).toBe((granted.windowIndex + (algorithm === 'fixedWindow' ? 1 : 2)) * WINDOW_MS)
  })

  it('refuses the grant of a call cancelled before it ran', async () => {
    const key = freshKey()
    const early = await lease.call(key, 0, 0, -1, '', 'inst:7')
    expect(early.free).toBe(LIMIT)
    const late = await lease.call(key, 1, 0, -1, 'inst:7')
    expect([late.granted, late.slice, late.free]).toEqual([false, 0, LIMIT])
    expect(await counterOf(key, late.windowIndex)).toBe(0)
    const other = await lease.call(key, 1, 0, -1, 'inst:8')
    expect([other.granted, other.slice]).toEqual([true, 25])
  })

  it('ignores a give-back of a window that is over', async () => {
    const key = freshKey()
    const first = await lease.call(key, 1, 0, -1)
    const stale = await lease.call(key, 0, 10, first.windowIndex - 2)
    expect(stale.free).toBe(75)
    expect(await counterOf(key, first.windowIndex)).toBe(25)
  })
})

describe('lease script, slidingWindow across windows', () => {
  const policy = policyOf('slidingWindow')
  const lease = new LeaseCalls(redis, keySpace, policy, FRACTION, 1)

  it("gives back to the previous window's counter, which weighs on the current estimate", async () => {
    const key = freshKey()
    const probe = await lease.call(key, 0, 0, -1)
    const index = probe.windowIndex
    const [even, odd] = rateLimitKeys(keySpace, policy, key) as [string, string]
    const prevKey = (index - 1) % 2 === 0 ? even : odd
    // the previous window left 80 units counted (as a lease of that window would have)
    await redis.set(prevKey, 80, 'PXAT', (index - 1) * WINDOW_MS + 2 * WINDOW_MS)
    const before = await lease.call(key, 0, 0, -1)
    const weight = (WINDOW_MS - (before.nowMs - index * WINDOW_MS)) / WINDOW_MS
    expect(before.free).toBe(Math.floor(LIMIT - 80 * weight + 1e-9))
    const after = await lease.call(key, 0, 60, index - 1)
    expect(Number(await redis.get(prevKey))).toBe(20)
    expect(after.free).toBeGreaterThanOrEqual(Math.floor(LIMIT - 20 * weight))
    expect(after.free).toBeGreaterThan(before.free)
  })

  it("cancels a grant of the previous window into that window's counter", async () => {
    const key = freshKey()
    const probe = await lease.call(key, 0, 0, -1)
    const index = probe.windowIndex
    const [even, odd] = rateLimitKeys(keySpace, policy, key) as [string, string]
    const [evenGrants, oddGrants] = leaseGrantKeys(keySpace, policy, key) as [string, string]
    const prevKey = (index - 1) % 2 === 0 ? even : odd
    const prevGrants = (index - 1) % 2 === 0 ? evenGrants : oddGrants
    // what a grant of 30 units in the previous window left behind
    const prevExpiry = (index - 1) * WINDOW_MS + 2 * WINDOW_MS
    await redis.set(prevKey, 30, 'PXAT', prevExpiry)
    await redis.hset(prevGrants, 'inst:prev', 30)
    await redis.pexpireat(prevGrants, prevExpiry)
    await lease.call(key, 0, 0, -1, '', 'inst:prev')
    expect(Number(await redis.get(prevKey))).toBe(0)
    expect(await redis.hget(prevGrants, 'inst:prev')).toBe('x')
  })
})

describe('lease calls under a deadline', () => {
  it('fail the batch past the deadline, then hand each item its late reply', async () => {
    const server = await PrivateRedis.start()
    const client = await privateRedisClient(server)
    const admin = new Redis(server.port, '127.0.0.1')
    try {
      const policy = policyOf('fixedWindow')
      const lease = new LeaseCalls(client, keySpace, policy, FRACTION, 16, { timeoutMs: 50, maxWaitMs: 2000 })
      await lease.call('warm', 0, 0, -1) // the script in Redis's cache: the paused call is one EVALSHA
      const outcomes: string[] = []
      const late: number[] = []
      const item = (key: string) => ({
        answered: () => outcomes.push(`${key}: answered`),
        failed: (error: unknown) =>
          outcomes.push(`${key}: ${error instanceof RedisTimeoutError ? 'timeout' : error}`),
        answeredLate: (reply: readonly number[], at: number) => late.push(leaseReply(reply, at).slice),
        lost: () => outcomes.push(`${key}: lost`),
      })
      await admin.client('PAUSE', 400, 'ALL') // a stalled Redis: the script runs when it resumes
      lease.add('a', 1, 0, -1, '', item('a'))
      lease.add('b', 4, 0, -1, '', item('b'))
      await sleep(200)
      expect(outcomes).toEqual(['a: timeout', 'b: timeout'])
      await sleep(600)
      // the slices the script reserved after the pause, so the caller can give them back
      expect(late).toEqual([25, 25])
      expect(outcomes).toHaveLength(2) // neither answered nor lost on top
    } finally {
      admin.disconnect()
      client.disconnect()
      await server.destroy()
    }
  })
})
