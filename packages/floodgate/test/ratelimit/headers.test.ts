import { afterAll, describe, expect, it } from 'vitest'
import {
  createRateLimiter,
  InvalidArgumentError,
  putRateLimitHeaders,
  RATE_LIMIT_ALGORITHMS,
  type RateLimitResult,
  rateLimitHeaders,
} from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// Test 5: header values and units against draft-ietf-httpapi-ratelimit-headers-11, unit level,
// then from real Redis decisions of every algorithm.
const policy = { name: 'api', algorithm: 'slidingWindow', limit: 100, windowMs: 60_000, burst: 100 } as const
const nowMs = 1_800_000_000_250

const result = (patch: Partial<RateLimitResult>): RateLimitResult => ({
  allowed: true,
  limit: 100,
  remaining: 42,
  resetAtMs: nowMs + 16_100,
  retryAfterMs: 0,
  nowMs,
  policy,
  source: 'redis',
  ...patch,
})

// sf-string name, then integer parameters (RFC 9651 Structured Fields)
const POLICY_FIELD = /^"[^"\\]*";q=\d+;w=\d+$/
const LIMIT_FIELD = /^"[^"\\]*";r=\d+;t=\d+$/

describe('rateLimitHeaders', () => {
  it('describes an allowed request: quota, window and reset in integer seconds', () => {
    const headers = rateLimitHeaders(result({}))
    expect(headers).toEqual({
      'RateLimit-Policy': '"api";q=100;w=60',
      RateLimit: '"api";r=42;t=17', // 16.1 s rounds up
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '42',
      'X-RateLimit-Reset': '1800000017', // Unix epoch seconds: ceil((now + 16.1 s) / 1000)
    })
    expect(headers['RateLimit-Policy']).toMatch(POLICY_FIELD)
    expect(headers.RateLimit).toMatch(LIMIT_FIELD)
    expect(headers['Retry-After']).toBeUndefined()
  })

  it('gives a rejected request an integer Retry-After no earlier than t', () => {
    for (const retryAfterMs of [1, 999, 1000, 1001, 2500, 59_999]) {
      const headers = rateLimitHeaders(result({ allowed: false, remaining: 0, retryAfterMs }))
      const t = Number(/;t=(\d+)$/.exec(headers.RateLimit!)![1])
      const retryAfter = headers['Retry-After']!
      expect(retryAfter).toMatch(/^\d+$/)
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(t)
      expect(Number(retryAfter)).toBe(Math.ceil(retryAfterMs / 1000))
      expect(t).toBeGreaterThanOrEqual(1)
      expect(Number(headers['X-RateLimit-Reset'])).toBeGreaterThanOrEqual((nowMs + retryAfterMs) / 1000)
    }
  })

  it('falls back to the full reset when the cost can never fit', () => {
    const headers = rateLimitHeaders(result({ allowed: false, retryAfterMs: -1, resetAtMs: nowMs + 30_000 }))
    expect(headers.RateLimit).toBe('"api";r=42;t=30')
    expect(headers['Retry-After']).toBe('30')
  })

  it('rounds a sub-second window up to w=1 and never reports a negative t', () => {
    const headers = rateLimitHeaders(result({ policy: { ...policy, windowMs: 250 }, resetAtMs: nowMs - 5 }), {
      name: 'burst',
    })
    expect(headers['RateLimit-Policy']).toBe('"burst";q=100;w=1')
    expect(headers.RateLimit).toBe('"burst";r=42;t=0')
  })

  it('sliding window: t and X-RateLimit-Reset stop at the current window end, not the full restore', () => {
    // one call 20.25 s into an aligned 60 s window: it ends in 39.75 s; the count decays to 0
    // only at the end of the next window, 99.75 s away
    const at = 1_800_000_020_250
    const headers = rateLimitHeaders(result({ nowMs: at, remaining: 99, resetAtMs: 1_800_000_120_000 }))
    expect(headers.RateLimit).toBe('"api";r=99;t=40')
    expect(headers['X-RateLimit-Reset']).toBe('1800000060')
  })

  it('a rejected wait longer than the window: t = w, Retry-After the full wait', () => {
    const headers = rateLimitHeaders(result({ allowed: false, remaining: 0, retryAfterMs: 100_500 }))
    expect(headers.RateLimit).toBe('"api";r=0;t=60')
    expect(headers['Retry-After']).toBe('101')
  })

  it('token bucket with burst above the rate: t ≤ w although a full bucket is further away', () => {
    const bucket = { ...policy, algorithm: 'tokenBucket', burst: 500 } as const
    const headers = rateLimitHeaders(result({ policy: bucket, resetAtMs: nowMs + 240_000 }))
    expect(headers.RateLimit).toBe('"api";r=42;t=60')
    expect(headers['X-RateLimit-Reset']).toBe(String(Math.ceil((nowMs + 60_000) / 1000)))
  })

  it('refuses a name that would break the structured field', () => {
    expect(() => rateLimitHeaders(result({}), { name: 'a"b' })).toThrow(InvalidArgumentError)
    expect(() => rateLimitHeaders(result({}), { name: 'a\\b' })).toThrow(InvalidArgumentError)
  })

  it('one policy, another name or limit (insurance): the fields follow each call', () => {
    // the per-policy parts are built once per policy; a call naming it otherwise must not reuse them
    expect(rateLimitHeaders(result({}))['RateLimit-Policy']).toBe('"api";q=100;w=60')
    const renamed = rateLimitHeaders(result({}), { name: 'edge' })
    expect([renamed['RateLimit-Policy'], renamed.RateLimit]).toEqual([
      '"edge";q=100;w=60',
      '"edge";r=42;t=17',
    ])
    const insured = rateLimitHeaders(result({ limit: 33, remaining: 7, source: 'insurance' }))
    expect([insured['RateLimit-Policy'], insured['X-RateLimit-Limit']]).toEqual(['"api";q=33;w=60', '33'])
    expect(() => rateLimitHeaders(result({}), { name: 'a"b' })).toThrow(InvalidArgumentError)
    expect(rateLimitHeaders(result({})).RateLimit).toBe('"api";r=42;t=17')
  })
})

describe('putRateLimitHeaders', () => {
  const put = (r: RateLimitResult, options?: { name: string }) => {
    const pairs: [string, string][] = []
    putRateLimitHeaders(r, (name, value) => pairs.push([name, value]), options)
    return pairs
  }

  it('passes the fields of rateLimitHeaders in order, with lower-case names', () => {
    for (const r of [
      result({}),
      result({ allowed: false, remaining: 0, retryAfterMs: 2500 }),
      result({ remaining: 7, resetAtMs: nowMs + 400 }),
    ]) {
      const expected = Object.entries(rateLimitHeaders(r, { name: 'n' })).map(([k, v]) => [
        k.toLowerCase(),
        v,
      ])
      expect(put(r, { name: 'n' })).toEqual(expected)
    }
    expect(put(result({ allowed: false, remaining: 0, retryAfterMs: 1 })).map(([name]) => name)).toEqual([
      'ratelimit-policy',
      'ratelimit',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'retry-after',
    ])
  })

  it('refuses a name that would break the structured field before passing any field', () => {
    const pairs: string[] = []
    expect(() => putRateLimitHeaders(result({}), (name) => pairs.push(name), { name: 'a"b' })).toThrow(
      InvalidArgumentError,
    )
    expect(pairs).toEqual([])
  })
})

describe('rateLimitHeaders from Redis decisions', () => {
  const redis = testRedisClient()
  const prefix = uniquePrefix('rl-headers')
  afterAll(async () => {
    await deleteByPrefix(redis, prefix)
    redis.disconnect()
  })
  const field = (headers: Record<string, string>, param: string) =>
    Number(new RegExp(`;${param}=(\\d+)`).exec(`${headers.RateLimit};${headers['RateLimit-Policy']}`)![1])

  for (const algorithm of RATE_LIMIT_ALGORITHMS) {
    it(`${algorithm}: t ≤ w and X-RateLimit-Reset ≤ now + w, allowed and rejected`, async () => {
      // burst 3× the rate: a full bucket is 3 windows away
      const limiter = createRateLimiter({
        redis,
        prefix,
        algorithm,
        limit: 4,
        burst: 12,
        windowMs: 60_000,
        timeoutMs: 2000,
        fallback: 'failClosed',
      })
      const results: RateLimitResult[] = []
      for (let i = 0; i < 14; i++) results.push(await limiter.limit('user', { cost: i === 0 ? 1 : 2 }))
      expect(results.some((r) => !r.allowed)).toBe(true)
      for (const r of results) {
        expect(r.source).toBe('redis')
        const headers = rateLimitHeaders(r)
        const t = field(headers, 't')
        expect(field(headers, 'w')).toBe(60)
        expect(t, JSON.stringify(headers)).toBeLessThanOrEqual(60)
        expect(Number(headers['X-RateLimit-Reset'])).toBeLessThanOrEqual(Math.ceil(r.nowMs / 1000) + 60)
        if (!r.allowed) expect(Number(headers['Retry-After'])).toBeGreaterThanOrEqual(t)
      }
    })
  }
})
