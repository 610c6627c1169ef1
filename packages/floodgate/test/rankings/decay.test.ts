import { describe, expect, it } from 'vitest'
import {
  assertFiniteScore,
  bucketWeights,
  compareRanked,
  decayRatePerMs,
  fromMember,
  InvalidArgumentError,
  logAddExp,
  parseScore,
  toMember,
} from '../../src/index.js'

describe('bucketWeights', () => {
  it('halves every half-life and starts at 1 for the current minute', () => {
    const w = bucketWeights(60, 15)
    expect(w).toHaveLength(60)
    expect(w[0]).toBe(1)
    expect(w[15]).toBeCloseTo(0.5, 12)
    expect(w[30]).toBeCloseTo(0.25, 12)
    for (let i = 1; i < w.length; i++) expect(w[i]!).toBeLessThan(w[i - 1]!)
  })

  it('stays finite and positive over a 24 h window with a short half-life', () => {
    const w = bucketWeights(1440, 1)
    expect(w.every((x) => Number.isFinite(x) && x >= 0)).toBe(true)
  })

  it('rejects bad windows and half-lives', () => {
    expect(() => bucketWeights(0, 15)).toThrow(InvalidArgumentError)
    expect(() => bucketWeights(60, 0)).toThrow(InvalidArgumentError)
    expect(() => bucketWeights(60, Number.NaN)).toThrow(InvalidArgumentError)
    expect(() => bucketWeights(60, Number.POSITIVE_INFINITY)).toThrow(InvalidArgumentError)
  })
})

describe('log-space decay', () => {
  it('logAddExp(a, b) = log(e^a + e^b) without overflow', () => {
    expect(logAddExp(0, 0)).toBeCloseTo(Math.LN2, 12)
    expect(logAddExp(Math.log(3), Math.log(5))).toBeCloseTo(Math.log(8), 12)
    expect(logAddExp(1e5, 1e5)).toBeCloseTo(1e5 + Math.LN2, 6)
    expect(Number.isFinite(logAddExp(800, 1))).toBe(true)
  })

  it('rejects non-finite inputs', () => {
    expect(() => logAddExp(Number.NaN, 1)).toThrow(InvalidArgumentError)
    expect(() => logAddExp(1, Number.POSITIVE_INFINITY)).toThrow(InvalidArgumentError)
  })

  it('λ = ln 2 / half-life', () => {
    expect(decayRatePerMs(1000)).toBeCloseTo(Math.LN2 / 1000, 15)
    expect(() => decayRatePerMs(0)).toThrow(InvalidArgumentError)
  })
})

describe('finite scores', () => {
  it('lets finite numbers through and rejects NaN and infinities', () => {
    expect(assertFiniteScore(3.5)).toBe(3.5)
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => assertFiniteScore(bad)).toThrow(InvalidArgumentError)
    }
    expect(parseScore('12')).toBe(12)
    expect(() => parseScore('inf')).toThrow(InvalidArgumentError)
    expect(() => parseScore('nan')).toThrow(InvalidArgumentError)
  })
})

describe('members and tie order', () => {
  it('pads ids to 20 digits and back', () => {
    expect(toMember('42')).toBe('00000000000000000042')
    expect(fromMember(toMember('42'))).toBe('42')
    expect(() => toMember('4x')).toThrow(InvalidArgumentError)
    expect(() => toMember('123456789012345678901')).toThrow(InvalidArgumentError)
  })

  it('orders by score, then the newer (higher) id, numerically: 10 above 9', () => {
    const sorted = [
      { id: '9', score: 5 },
      { id: '10', score: 5 },
      { id: '2', score: 7 },
      { id: '100', score: 1 },
    ].sort(compareRanked)
    expect(sorted.map((e) => e.id)).toEqual(['2', '10', '9', '100'])
  })
})
