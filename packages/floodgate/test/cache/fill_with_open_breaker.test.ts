import { afterAll, describe, expect, it } from 'vitest'
import { type CacheOutcome, createCache } from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('fill-breaker')
afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('lock holder whose breaker opened during its load', () => {
  it('still fills (releasing the lock and waking the waiters) instead of leaving them to their wait deadline', async () => {
    const options = { redis, prefix, name: 'fb', l1: false as const, lockWaitMs: 8_000, lockTtlMs: 30_000 }
    const holder = createCache<string>({ ...options, breaker: { failureThreshold: 1, coolDownMs: 600_000 } })
    const waiter = createCache<string>(options)
    await Promise.all([holder.ready, waiter.ready])
    const outcomes: CacheOutcome[] = []
    waiter.events.on('outcome', ({ outcome }) => outcomes.push(outcome))

    let release!: () => void
    const loading = new Promise<void>((resolve) => {
      release = resolve
    })
    let started!: () => void
    const holderStarted = new Promise<void>((resolve) => {
      started = resolve
    })
    const held = holder.getOrLoad('k', async () => {
      started()
      await loading
      return 'v1'
    })
    await holderStarted
    const waited = waiter.getOrLoad('k', async () => 'v-from-waiter')
    // the waiter is queued on the lock once its claim saw it busy
    while (!outcomes.includes('lock_wait')) await new Promise((r) => setTimeout(r, 5))
    holder.breaker.failure() // e.g. other calls timed out on a loaded Redis meanwhile
    expect(holder.breaker.state).toBe('open')
    release()
    expect(await held).toBe('v1')
    expect(await waited).toBe('v1') // woken by the fill, not loading itself after 8 s
    expect(outcomes).not.toContain('wait_timeout')
    expect(await redis.exists(`${prefix}:c:fb:{k}:lock`)).toBe(0)
    holder.close()
    waiter.close()
  }, 15_000)
})
