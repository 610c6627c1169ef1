import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createInteractionFlush, Interactions, playViewer } from '../../src/interactions/index.js'
import type { StreamGroupConsumer } from '../../src/stream/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { waitDrained } from './drain.js'
import { createTestSchema, type TestSchema } from './pg_schema.js'

const WINDOW_MS = 400
const redis = testRedisClient(5000)
const prefix = uniquePrefix('ix-play')
const ix = new Interactions(redis, { prefix, partitions: 2, playDedupeWindowMs: WINDOW_MS })
let schema: TestSchema
let flush: StreamGroupConsumer

beforeAll(async () => {
  schema = await createTestSchema('play', 5)
  flush = createInteractionFlush(redis, schema.db, { prefix, partitions: 2, blockMs: 100 })
  flush.start()
})
afterAll(async () => {
  await flush.stop()
  await schema.drop()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('play dedupe (test 6)', () => {
  it('counts repeated plays by one viewer inside the window once, and again after it', async () => {
    const user = playViewer({ userId: 9 })
    const burst = await Promise.all(Array.from({ length: 20 }, () => ix.recordPlay('3', user)))
    expect(burst.filter((r) => r.counted)).toHaveLength(1)
    expect(burst.map((r) => r.count)).toEqual(Array(20).fill(1))

    const anonymous = playViewer({ ip: '198.51.100.7', userAgent: 'Firefox' })
    const otherBrowser = playViewer({ ip: '198.51.100.7', userAgent: 'Safari' })
    expect(anonymous).not.toBe(otherBrowser)
    expect((await ix.recordPlay('3', anonymous)).counted).toBe(true)
    expect((await ix.recordPlay('3', anonymous)).counted).toBe(false)
    expect((await ix.recordPlay('3', otherBrowser)).counted).toBe(true)
    expect((await ix.recordPlay('4', user)).counted).toBe(true) // another video

    // counted again only two window generations after its counted play: W to 2W later
    await sleep(2 * WINDOW_MS + 150)
    const after = await ix.recordPlay('3', user)
    expect(after).toMatchObject({ counted: true, count: 4 })
    expect((await ix.recordPlay('3', user)).counted).toBe(false)

    await waitDrained(flush)
    const { rows } = await schema.pool.query(
      `SELECT v.id::int AS id, v.play_count::int AS count, count(p.event_id)::int AS rows,
        count(DISTINCT p.viewer)::int AS viewers
       FROM items v LEFT JOIN item_plays p ON p.item_id = v.id WHERE v.id IN (3, 4) GROUP BY v.id ORDER BY v.id`,
    )
    expect(rows).toEqual([
      { id: 3, count: 4, rows: 4, viewers: 3 },
      { id: 4, count: 1, rows: 1, viewers: 1 },
    ])
  })
})
