import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CountsRecovery, RECOVERY_DEFAULTS } from '../../src/index.js'
import type { RedisClient } from '../../src/redis/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { type CountersSchema, createCountersSchema } from './pg_schema.js'

const redis = testRedisClient()
const prefix = uniquePrefix('pace')
const P = 4
const ITEMS = 600
let schema: CountersSchema

/** The client, counting the scripts sent and not yet answered (the most at once in `peak`). */
function countingScripts(client: RedisClient): {
  client: RedisClient
  peak: () => number
  sent: () => number
} {
  let pending = 0
  let peak = 0
  let sent = 0
  const proxy = new Proxy(client, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver)
      if (name !== 'sendCommand' || typeof value !== 'function') return value
      return (command: { name: string }, ...rest: unknown[]) => {
        const reply = value.apply(target, [command, ...rest]) as Promise<unknown>
        if (command.name !== 'evalsha' && command.name !== 'eval') return reply
        sent++
        peak = Math.max(peak, ++pending)
        return reply.finally(() => pending--)
      }
    },
  })
  return { client: proxy, peak: () => peak, sent: () => sent }
}

beforeAll(async () => {
  schema = await createCountersSchema('pace', ITEMS)
  // every item: one like, one favourite, one play — one restore step per item and kind
  await schema.db.query('INSERT INTO item_likes (item_id, user_id) SELECT id, 1 FROM items')
  await schema.db.query('INSERT INTO item_favorites (item_id, user_id) SELECT id, 2 FROM items')
  await schema.db.query('UPDATE items SET like_count = 1, favorite_count = 1, play_count = 1')
})

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
  await schema.drop()
})

describe('rebuild pacing', () => {
  it('keeps at most stepsInFlight restore scripts awaiting Redis, whatever the page size', async () => {
    // chunkSize (default 2,000) kept above the item count whatever ITEMS is: one page per table,
    // which the rebuild used to send at once (600 scripts queued ahead of any read on that Redis)
    const counting = countingScripts(redis)
    const recovery = new CountsRecovery({
      redis: counting.client,
      sql: schema.db,
      prefix,
      partitions: P,
      chunkSize: 5000,
    })
    const outcome = await recovery.rebuild()
    expect(outcome.rebuilt).toBe(true)
    if (!outcome.rebuilt) return
    expect(outcome.report).toMatchObject({ likeRows: ITEMS, favoriteRows: ITEMS, playItems: ITEMS })
    expect(counting.sent()).toBeGreaterThanOrEqual(3 * ITEMS)
    expect(counting.peak()).toBeLessThanOrEqual(RECOVERY_DEFAULTS.stepsInFlight)
    // still concurrent: a reply frees the next call, Redis is not left idle per round trip
    expect(counting.peak()).toBeGreaterThan(1)
    expect(await redis.get(recovery.keys.plays(String(ITEMS)))).toBe('1')
  })
})
