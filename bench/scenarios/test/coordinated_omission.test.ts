import { describe, expect, it } from 'vitest'
import { expectedIntervalMs, Recorder } from '../recorder.js'

describe('expectedIntervalMs', () => {
  it('is connections / rate in ms, undefined for a closed loop', () => {
    expect(expectedIntervalMs(8, 150)).toBeCloseTo(53.333, 3)
    expect(expectedIntervalMs(1, 1000)).toBe(1)
    expect(expectedIntervalMs(4, undefined)).toBeUndefined()
  })

  it('rejects no connection or a rate ≤ 0', () => {
    expect(() => expectedIntervalMs(0, 100)).toThrow(RangeError)
    expect(() => expectedIntervalMs(2, 0)).toThrow(RangeError)
  })
})

describe('Recorder: coordinated-omission correction', () => {
  it('adds the requests a stalled connection would have sent (latency − k × interval ≥ interval)', () => {
    const r = new Recorder(performance.now())
    for (let i = 0; i < 99; i++) r.response(200, 1, 50)
    r.response(200, 300, 50)
    // measured: 100 answers, one stall of 300 ms
    expect(r.uncorrected.totalCount).toBe(100)
    expect(r.uncorrectedPercentiles().p99).toBeCloseTo(1, 1)
    // corrected: + 250, 200, 150, 100, 50 ms (the 5 requests the stalled connection held back)
    expect(r.histogram.totalCount).toBe(105)
    expect(r.seconds[0]?.histogram.totalCount).toBe(105)
    const p = r.percentiles()
    expect(p.max).toBeCloseTo(300, 0)
    expect(p.p99).toBeGreaterThanOrEqual(249)
    expect(p.p50).toBeCloseTo(1, 1)
    // status classes count answers, not synthetic samples
    expect(r.requests).toBe(100)
  })

  it('records as measured without an interval or when the answer came within it', () => {
    const r = new Recorder(performance.now())
    r.response(200, 300)
    r.response(200, 40, 50)
    expect(r.histogram.totalCount).toBe(2)
    expect(r.uncorrected.totalCount).toBe(2)
  })
})
