import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createInteractionFlush, InteractionKeys, Interactions } from '../../src/interactions/index.js'
import type { StreamGroupConsumer } from '../../src/stream/index.js'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { waitDrained } from './drain.js'
import { createTestSchema, type TestSchema } from './pg_schema.js'

const redis = testRedisClient(5000)
const prefix = uniquePrefix('ix-click')
const keys = new InteractionKeys(prefix, 4)
const ix = new Interactions(redis, { prefix, partitions: 4 })
const clicker = new URL('./workers/clicker.ts', import.meta.url)
let schema: TestSchema
let flush: StreamGroupConsumer

beforeAll(async () => {
  schema = await createTestSchema('click', 10)
  flush = createInteractionFlush(redis, schema.db, { prefix, partitions: 4, blockMs: 100 })
  flush.start()
})
afterAll(async () => {
  await flush.stop()
  await schema.drop()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

type Result = { changed: boolean; count: number }

/** Two processes fire their clicks at the same wall-clock moment. */
async function clickFromTwoProcesses(video: string, users: [number, number], action: string, clicks: number) {
  const startAt = String(Date.now() + 1500)
  const workers = [0, 1].map(() =>
    spawnWorker(clicker, [
      prefix,
      '4',
      video,
      String(users[0]),
      String(users[1]),
      action,
      String(clicks),
      startAt,
    ]),
  )
  const replies = await Promise.all(workers.map((w) => w.waitFor((m) => 'results' in (m as object))))
  return replies.flatMap((r) => (r as { results: Result[] }).results)
}

async function dbState(video: string) {
  const { rows } = await schema.pool.query(
    'SELECT like_count::int AS count, (SELECT count(*)::int FROM item_likes WHERE item_id = $1) AS rows FROM items WHERE id = $1',
    [video],
  )
  return rows[0] as { count: number; rows: number }
}

describe('concurrent double clicks (test 1)', () => {
  it('50 concurrent double-clicks from one user over two processes count once and make one row', async () => {
    const results = await clickFromTwoProcesses('7', [3, 3], 'like', 25)
    expect(results).toHaveLength(100)
    expect(results.filter((r) => r.changed)).toHaveLength(1)
    expect(results.every((r) => r.count === 1)).toBe(true)
    expect(await redis.scard(keys.likes('7'))).toBe(1)
    const p = keys.partitionOf('7')
    expect(await redis.xlen(keys.stream(p))).toBeLessThanOrEqual(1) // one event (or trimmed after ack)
    await waitDrained(flush)
    expect(await dbState('7')).toEqual({ count: 1, rows: 1 })
  })

  it('concurrent unlikes never drive a count below zero, in Redis or in the database', async () => {
    const liked = await Promise.all(Array.from({ length: 20 }, (_, i) => ix.setLiked('8', i + 1, true)))
    expect(liked.every((r) => r.changed)).toBe(true)
    await waitDrained(flush)
    expect(await dbState('8')).toEqual({ count: 20, rows: 20 })

    const results = await clickFromTwoProcesses('8', [1, 20], 'unlike', 3)
    expect(results).toHaveLength(240)
    expect(results.filter((r) => r.changed)).toHaveLength(20)
    expect(Math.min(...results.map((r) => r.count))).toBe(0)
    expect(await redis.scard(keys.likes('8'))).toBe(0)
    await waitDrained(flush)
    expect(await dbState('8')).toEqual({ count: 0, rows: 0 })
  })
})
