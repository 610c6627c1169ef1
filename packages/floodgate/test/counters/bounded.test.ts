import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { forEachBounded } from '../../src/counters/bounded.js'

describe('forEachBounded', () => {
  it('starts items in order, never more than the limit pending', async () => {
    let pending = 0
    let peak = 0
    const started: number[] = []
    await forEachBounded([5, 1, 4, 2, 3, 1, 2], 3, async (ms) => {
      started.push(ms)
      peak = Math.max(peak, ++pending)
      await sleep(ms)
      pending--
    })
    expect(started).toEqual([5, 1, 4, 2, 3, 1, 2])
    expect(peak).toBe(3)
  })

  it('rejects with the first error after the started calls settle, and starts no more', async () => {
    const settled: number[] = []
    const run = forEachBounded([0, 1, 2, 3, 4, 5], 2, async (i) => {
      await sleep(i === 1 ? 1 : 20)
      if (i === 1) throw new Error('step 1 failed')
      settled.push(i)
    })
    await expect(run).rejects.toThrow('step 1 failed')
    expect(settled).toEqual([0]) // 0 was running when 1 failed and finished; 2… never started
  })
})
