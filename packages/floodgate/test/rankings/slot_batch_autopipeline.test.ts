import { afterAll, describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../src/errors/index.js'
import { createRedisClient } from '../../src/index.js'
import { SlotBatch } from '../../src/rankings/slot_batch.js'
import { deleteByPrefix, TEST_REDIS_URL, testRedis, uniquePrefix } from '../support/redis.js'

const redis = testRedis()
const prefix = uniquePrefix('slotbatch-ap')
const client = createRedisClient(TEST_REDIS_URL, {
  commandTimeoutMs: 1000,
  redis: { enableAutoPipelining: true },
})

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
  client.disconnect()
})

describe('SlotBatch on an auto-pipelining client', () => {
  it('replies in the order added, one pipeline per tick shared with concurrent batches', async () => {
    await new Promise((resolve) =>
      client.status === 'ready' ? resolve(null) : client.once('ready', resolve),
    )
    const [s, g] = [`${prefix}:{a}:set`, `${prefix}:{b}:str`]
    await redis.sadd(s, 'x', 'y', 'z')
    await redis.set(g, '42')
    const batch = () =>
      new SlotBatch(client)
        .add(g, (p) => p.get(g))
        .add(s, (p) => p.scard(s))
        .add(s, (p) => p.sismember(s, 'y'))
        .add('', (p) => p.time())
    const pending = [batch().exec('test'), batch().exec('test')]
    // both batches wait in the client's auto-pipeline (an explicit pipeline would bypass it)
    const queued = client.autoPipelineQueueSize
    const [one, two] = await Promise.all(pending)
    for (const replies of [one!, two!]) {
      expect(replies.slice(0, 3)).toEqual(['42', 3, 1])
      expect(Array.isArray(replies[3])).toBe(true)
    }
    expect(queued).toBe(8)
  })

  it('a failing command throws StoreUnavailableError with the Redis error as cause', async () => {
    const s = `${prefix}:{c}:set`
    await redis.sadd(s, 'x')
    const batch = new SlotBatch(client).add(s, (p) => p.scard(s)).add(s, (p) => p.get(s))
    const error = await batch.exec('wrongtype').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StoreUnavailableError)
    expect((error as Error).message).toMatch(/^wrongtype: WRONGTYPE/)
  })
})
