import { describe, expect, it } from 'vitest'
import * as invariants from '../burst_invariants.js'
import { parseRateLimitPolicy } from '../quota_probe.js'
import { slidingWindowBound } from '../scenario.js'

const figures = (over: Partial<invariants.BurstFigures> = {}): invariants.BurstFigures => ({
  instances: 2,
  statementsPerLoad: 1,
  cold: { requests: 3000, dbStatements: 2, failed: 0 },
  absent: { requests: 3000, dbStatements: 30, failed: 0 },
  quota: { requests: 300, dbStatements: 0, failed: 0, admitted: 100, bound: 101 },
  ...over,
})

describe('parseRateLimitPolicy', () => {
  it('reads name, q and w (s → ms) of the first policy', () => {
    expect(parseRateLimitPolicy('"user";q=100;w=60')).toEqual({ name: 'user', limit: 100, windowMs: 60_000 })
    expect(parseRateLimitPolicy('"a"; w=10; q=5, "b";q=1;w=1')).toEqual({
      name: 'a',
      limit: 5,
      windowMs: 10_000,
    })
  })

  it('throws without a quoted name or an integer q and w', () => {
    expect(() => parseRateLimitPolicy('user;q=100;w=60')).toThrow(/RateLimit-Policy/)
    expect(() => parseRateLimitPolicy('"user";q=100')).toThrow(/RateLimit-Policy/)
    expect(() => parseRateLimitPolicy('"user";q=1.5;w=60')).toThrow(/RateLimit-Policy/)
  })
})

describe('slidingWindowBound', () => {
  it('is limit × (1 + duration / window), floored', () => {
    expect(slidingWindowBound(100, 1_200, 60_000)).toBe(102)
    expect(slidingWindowBound(300, 15_000, 10_000)).toBe(750)
    expect(slidingWindowBound(100, 0, 60_000)).toBe(100)
  })
})

describe('burst invariants', () => {
  it('per 1,000 requests, one decimal; 0 without requests', () => {
    expect(invariants.per1k(1216, 3000)).toBe(405.3)
    expect(invariants.per1k(5, 0)).toBe(0)
  })

  it('cold burst: at most one cold read’s statements per instance, whatever the requests', () => {
    expect(invariants.coldBurstBounded(figures()).ok).toBe(true)
    const over = invariants.coldBurstBounded(
      figures({ cold: { requests: 3000, dbStatements: 3, failed: 0 } }),
    )
    expect(over.ok).toBe(false)
    expect(over.detail).toContain('bound 2 × 1 = 2')
    // a calibration that saw no statement still allows one load per instance
    expect(invariants.coldBurstBounded(figures({ statementsPerLoad: 0 })).ok).toBe(true)
  })

  it('absent ids: at most 1 % of the requests reach the database', () => {
    expect(invariants.absentIdsGated(figures()).ok).toBe(true)
    expect(
      invariants.absentIdsGated(figures({ absent: { requests: 3000, dbStatements: 31, failed: 0 } })).ok,
    ).toBe(false)
  })

  it('quota: every mode’s admitted ≤ its bound', () => {
    const ok = figures()
    const over = figures({ quota: { requests: 300, dbStatements: 0, failed: 0, admitted: 186, bound: 101 } })
    expect(invariants.admittedWithinQuota({ none: ok, legacy: ok, floodgate: ok }).ok).toBe(true)
    const bad = invariants.admittedWithinQuota({ none: ok, legacy: over, floodgate: ok })
    expect(bad.ok).toBe(false)
    expect(bad.detail).toContain('older design 186 / 101')
  })

  it('no failures: any 5xx or request error in any burst fails it', () => {
    expect(invariants.noFailures(figures()).ok).toBe(true)
    expect(
      invariants.noFailures(figures({ absent: { requests: 3000, dbStatements: 0, failed: 1 } })).ok,
    ).toBe(false)
  })
})
