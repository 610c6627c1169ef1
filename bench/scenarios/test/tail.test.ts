import { describe, expect, it } from 'vitest'
import type { ModeName } from '../modes.js'
import type { Percentiles } from '../recorder.js'
import { noReadSatOutAWait, WAIT_BOUND_MS } from '../tail.js'

const tail = (max: number, p99 = 50): Percentiles => ({ p50: 10, p99, p999: Math.min(max, 100), max })
const tails = (none: number, floodgate: number, noneP99 = 50): Record<ModeName, Percentiles> => ({
  none: tail(none, noneP99),
  legacy: tail(200),
  floodgate: tail(floodgate),
})

describe('noReadSatOutAWait', () => {
  it('is the read path’s shortest wait bound with the defaults: 2,000 ms − 200 ms of jitter', () => {
    expect(WAIT_BOUND_MS).toBe(1_800)
  })

  it('holds while floodgate’s measured max stays under the bound', () => {
    expect(noReadSatOutAWait(tails(150, 1_799), 'reads').ok).toBe(true)
  })

  it('fails on a read that sat out a wait (the issue’s ~2.15 s) while no cache answered sooner', () => {
    const invariant = noReadSatOutAWait(tails(251, 2_153), 'reads')
    expect(invariant.ok).toBe(false)
    expect(invariant.detail).toContain('floodgate p99 50 ms, p99.9 100 ms, max 2153 ms')
    expect(invariant.detail).toContain('no cache p99 50 ms, p99.9 100 ms, max 251 ms')
  })

  it('blames nothing on floodgate when no cache shows the machine stalling on that scale', () => {
    // no cache had a read past the bound too
    const past = noReadSatOutAWait(tails(1_800, 3_779), 'reads')
    expect(past.ok).toBe(true)
    expect(past.detail).toMatch(/machine or PostgreSQL stalled/)
    // one plain read in 100 waited half the bound (a run at load ~37 here: p99 1,184 ms, max 1,523 ms)
    expect(noReadSatOutAWait(tails(1_523, 2_487, 1_184), 'reads').ok).toBe(true)
    expect(noReadSatOutAWait(tails(1_799, 2_153, 899), 'reads').ok).toBe(false)
  })
})
