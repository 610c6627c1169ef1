import { describe, expect, it } from 'vitest'
import type { ModeName } from '../modes.js'
import type { Percentiles } from '../recorder.js'
import { noReadSatOutAWait, WAIT_BOUND_MS } from '../tail.js'

const tail = (max: number, p999 = Math.min(max, 100)): Percentiles => ({ p50: 10, p99: 50, p999, max })
const tails = (none: number, floodgate: number): Record<ModeName, Percentiles> => ({
  none: tail(none),
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
    expect(invariant.detail).toContain('floodgate p99.9 100 ms, max 2153 ms')
    expect(invariant.detail).toContain('no cache p99.9 100 ms, max 251 ms')
  })

  it('blames nothing on floodgate when no cache had a read past the bound too (a stalled machine)', () => {
    const invariant = noReadSatOutAWait(tails(1_800, 3_779), 'reads')
    expect(invariant.ok).toBe(true)
    expect(invariant.detail).toMatch(/machine or PostgreSQL stalled/)
    expect(noReadSatOutAWait(tails(1_799, 2_153), 'reads').ok).toBe(false)
  })
})
