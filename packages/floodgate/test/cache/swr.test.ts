import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { WorkerGroup } from './workers/harness.js'

const redis = testRedisClient()
const prefix = uniquePrefix('swr')
let group: WorkerGroup
const ttlMs = 500
const loaderMs = 300

beforeAll(async () => {
  group = new WorkerGroup(redis, prefix, 3, { l1: false, ttlMs, staleWhileRevalidateMs: 30_000 })
  await group.ready()
}, 90_000)

afterAll(async () => {
  await group.stop()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('stale-while-revalidate across processes', () => {
  it('past logical expiry, every caller gets the stale value at once and exactly one refresh runs', async () => {
    const [first] = await group.send({ op: 'swarm', key: 'k', callers: 1, loaderMs: 0, only: 0 }, 1)
    expect(first!.values).toEqual(['k#1'])
    await sleep(ttlMs + 100) // logically expired, physically still there (grace)
    const replies = await group.send({ op: 'swarm', key: 'k', callers: 100, loaderMs })
    for (const reply of replies) {
      expect(reply.ok).toBe(100)
      expect(reply.values).toEqual(['k#1'])
      // served stale with no wait: far below the loader's 300 ms
      expect(reply.maxMs as number).toBeLessThan(loaderMs / 2)
    }
    await sleep(loaderMs + 300)
    expect(Number(await redis.get(`${prefix}:loads`))).toBe(2)
    const later = await group.send({ op: 'swarm', key: 'k', callers: 10, loaderMs })
    for (const reply of later) expect(reply.values).toEqual(['k#2'])
    expect(Number(await redis.get(`${prefix}:loads`))).toBe(2)
  }, 60_000)
})
