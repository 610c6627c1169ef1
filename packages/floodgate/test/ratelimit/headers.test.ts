import { describe, expect, it } from 'vitest'
import { InvalidArgumentError, type RateLimitResult, rateLimitHeaders } from '../../src/index.js'

// Test 5 (unit level): header values and units against draft-ietf-httpapi-ratelimit-headers-10.
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

  it('refuses a name that would break the structured field', () => {
    expect(() => rateLimitHeaders(result({}), { name: 'a"b' })).toThrow(InvalidArgumentError)
  })
})
