import { describe, expect, it } from 'vitest'
import { equalJitterDelayMs } from '../../src/index.js'

describe('equalJitterDelayMs', () => {
  it('doubles from the base up to the cap, drawn in [d/2, d]', () => {
    expect([0, 1, 2, 3, 4, 39].map((n) => equalJitterDelayMs(n, 1000, 5000, () => 1))).toEqual([
      1000, 2000, 4000, 5000, 5000, 5000,
    ])
    expect([0, 1, 2, 3].map((n) => equalJitterDelayMs(n, 1000, 5000, () => 0))).toEqual([
      500, 1000, 2000, 2500,
    ])
  })
})
