import { Registry } from 'prom-client'
import { afterAll, describe, expect, it } from 'vitest'
import {
  bindMutexMetrics,
  InvalidArgumentError,
  LockTimeoutError,
  Mutex,
  MutexEventEmitter,
} from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('lock-api')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('Mutex options named like the other primitives', () => {
  it('Mutex.named takes a prefix string', async () => {
    const mutex = Mutex.named(redis, prefix, 'report')
    expect(mutex.keys).toEqual({ lock: `${prefix}:lock:{report}`, fence: `${prefix}:lock:{report}:fence` })
    const lease = await mutex.acquire()
    expect(await redis.get(mutex.keys.lock)).not.toBeNull()
    await lease.release()
  })
})

describe('fence key lifetime (fenceTtlMs)', () => {
  it('by default the fence never expires; with fenceTtlMs it expires that long after the last acquire', async () => {
    const forever = Mutex.named(redis, prefix, 'order:1')
    await (await forever.acquire()).release()
    expect(await redis.pttl(forever.keys.fence)).toBe(-1)

    const bounded = Mutex.named(redis, prefix, 'order:2', { ttlMs: 1000, fenceTtlMs: 60_000 })
    await (await bounded.acquire()).release()
    const pttl = await redis.pttl(bounded.keys.fence)
    expect(pttl).toBeGreaterThan(50_000)
    expect(pttl).toBeLessThanOrEqual(60_000)
  })

  it('rejects a fenceTtlMs shorter than ttlMs', () => {
    expect(() => Mutex.named(redis, prefix, 'x', { ttlMs: 5000, fenceTtlMs: 100 })).toThrow(
      InvalidArgumentError,
    )
  })
})

describe('mutex metrics and events', () => {
  it('counts acquisitions by outcome and leases that ended, every series present from the start', async () => {
    const registry = new Registry()
    const events = new MutexEventEmitter()
    bindMutexMetrics(registry, 'jobs', events)
    const before = await registry.metrics()
    expect(before).toContain('floodgate_mutex_acquisitions_total{mutex="jobs",outcome="timeout"} 0')
    expect(before).toContain('floodgate_mutex_leases_ended_total{mutex="jobs",reason="lost"} 0')

    const warnings: Record<string, unknown>[] = []
    const logger = { warn: (fields: Record<string, unknown>) => warnings.push(fields) }
    const holder = Mutex.named(redis, prefix, 'job:1', { events, logger })
    const contender = Mutex.named(redis, prefix, 'job:1', { events, logger })
    const lease = await holder.acquire()
    await expect(contender.acquire({ waitMs: 50 })).rejects.toThrow(LockTimeoutError)
    await redis.del(holder.keys.lock) // someone else's cleanup: the holder finds out on its next renewal
    expect(await lease.extend()).toBe(false)
    const second = await contender.acquire()
    await second.release()

    const text = await registry.metrics()
    expect(text).toContain('floodgate_mutex_acquisitions_total{mutex="jobs",outcome="acquired"} 2')
    expect(text).toContain('floodgate_mutex_acquisitions_total{mutex="jobs",outcome="timeout"} 1')
    expect(text).toContain('floodgate_mutex_leases_ended_total{mutex="jobs",reason="lost"} 1')
    expect(text).toContain('floodgate_mutex_leases_ended_total{mutex="jobs",reason="released"} 1')
    expect(text).toContain('floodgate_mutex_acquire_wait_seconds_count{mutex="jobs"} 3')
    expect(warnings).toEqual([
      expect.objectContaining({ primitive: 'mutex', reason: 'lost', lock: holder.keys.lock }),
    ])
  })
})
