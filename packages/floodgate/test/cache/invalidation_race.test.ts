import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCache, createRedisClient } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'
import { WorkerGroup } from './workers/harness.js'

const redis = testRedisClient()
const prefix = uniquePrefix('inval')
let group: WorkerGroup

beforeAll(async () => {
  group = new WorkerGroup(redis, prefix, 3, { l1: { ttlMs: 60_000 } })
  await group.ready()
}, 90_000)

afterAll(async () => {
  await group.stop()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('invalidation race across processes', () => {
  it('a slow load that began before an update never leaves the old value in L2 or in any L1', async () => {
    // The updater is this process: it writes the "database", then invalidates.
    const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })
    const updater = createCache<string>({ redis: client, name: 'w', prefix })
    await updater.ready
    try {
      for (let round = 0; round < 5; round++) {
        const key = `video:${round}`
        await redis.set(`${prefix}:db:${key}`, 'old')
        // Workers 1 and 2 first hold the old value in L1 (a completed load + an L2 hit).
        await group.send({ op: 'swarm', key, callers: 1, loaderMs: 0, only: 1 }, 1)
        await group.send({ op: 'swarm', key, callers: 1, loaderMs: 0, only: 2 }, 1)
        await updater.invalidate(key) // a first update: now the key is cold everywhere
        // Worker 0 starts a slow load of the old row…
        const loading = group.workers[0]!.waitFor(
          (m) =>
            (m as { event?: string; key?: string }).event === 'loading' && (m as { key: string }).key === key,
        )
        const slow = group.send({ op: 'swarm', key, callers: 5, loaderMs: 400, only: 0 }, 1)
        await loading
        await sleep(50) // the loader has read "old" from the database by now
        await redis.set(`${prefix}:db:${key}`, 'new')
        await updater.invalidate(key) // the update returns here
        await slow
        await sleep(150) // bus delivery
        const l2 = await redis.getBuffer(`${prefix}:c:w:{${key}}`)
        expect(l2 === null || !l2.toString().endsWith('"old"')).toBe(true)
        const peeks = await group.send({ op: 'peek', key })
        for (const peek of peeks) expect(peek.l1).not.toBe('old')
        // And a fresh read anywhere returns the new value.
        const [after] = await group.send({ op: 'swarm', key, callers: 1, loaderMs: 0, only: 1 }, 1)
        expect(after!.values).toEqual(['new'])
      }
    } finally {
      updater.close()
      client.disconnect()
    }
  }, 90_000)
})
