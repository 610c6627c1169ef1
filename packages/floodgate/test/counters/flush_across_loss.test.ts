import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CountsRecovery, createInteractionFlush, Interactions } from '../../src/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { type CountersSchema, createCountersSchema } from './pg_schema.js'

// A batch the flush read before Redis lost its data, committed after the recovery read PostgreSQL:
// the like would be in PostgreSQL and missing from the rebuilt set for good.
const redis = testRedisClient()
const prefix = uniquePrefix('fence')
const P = 2
let schema: CountersSchema
const interactions = new Interactions(redis, { prefix, partitions: P })
const keys = interactions.keys

beforeAll(async () => {
  schema = await createCountersSchema('fence', 5)
})

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  await redis.del(`{${keys.epoch()}}:rebuild`, `{${keys.epoch()}}:rebuild:fence`)
  interactions.close()
  redis.disconnect()
  await schema.drop()
})

async function pendingEntries(): Promise<number> {
  let pending = 0
  for (const p of keys.allPartitions()) {
    const reply = (await redis.xpending(keys.stream(p), 'flush').catch(() => [0])) as [number]
    pending += Number(reply[0])
  }
  return pending
}

/**
 * A like by `user` on `item` in the stream, the marker set, and a PostgreSQL transaction holding
 * the lock `lockSql` takes; the flush is started and has the entry pending when this returns.
 */
async function likeWithFlushHeld(item: string, user: string, lockSql: string, params: unknown[] = []) {
  const recovery = new CountsRecovery({ redis, sql: schema.db, prefix, partitions: P })
  expect((await recovery.rebuild()).rebuilt).toBe(true)
  await interactions.setLiked(item, user, true)
  const blocker = await schema.pool.connect()
  await blocker.query('BEGIN')
  await blocker.query(lockSql, params)
  const warnings: Record<string, unknown>[] = []
  const logger = { warn: (fields: Record<string, unknown>) => void warnings.push(fields) }
  const flush = createInteractionFlush(redis, schema.db, { prefix, partitions: P, blockMs: 50, logger })
  flush.start()
  for (let i = 0; i < 200 && (await pendingEntries()) === 0; i++) await sleep(10)
  expect(await pendingEntries()).toBe(1)
  return { recovery, blocker, flush, warnings }
}

/** Whether `user` likes `item` in Redis's set and in PostgreSQL's rows (1 or 0 each). */
async function likedIn(item: string, user: string): Promise<{ redis: number; db: number }> {
  const { rows } = await schema.db.query<{ n: string }>(
    'SELECT count(*) AS n FROM item_likes WHERE item_id = $1 AND user_id = $2',
    [item, user],
  )
  return { redis: await redis.sismember(keys.likes(item), user), db: Number(rows[0]!.n) }
}

describe('a flush batch read before a Redis loss', () => {
  it('is in the rebuilt sets if it commits, whatever the order of the commit and the rebuild', async () => {
    // Item 1's row held: the flush's transaction stops on its first statement, batch in hand.
    const { recovery, blocker, flush } = await likeWithFlushHeld(
      '1',
      '7',
      'SELECT id FROM items WHERE id = 1 FOR UPDATE',
    )
    try {
      await sleep(100)

      await deleteByPrefix(redis, prefix) // the loss: sets, streams and the epoch marker
      const rebuilt = recovery.rebuild()
      await sleep(300)
      await blocker.query('COMMIT')
      expect((await rebuilt).rebuilt).toBe(true)
      await sleep(300)
    } finally {
      blocker.release()
      await flush.stop()
    }

    expect(await likedIn('1', '7')).toEqual({ redis: 1, db: 1 })
  }, 20_000)

  it('is not applied when Redis lost its entries before the flush checked them', async () => {
    // The fence itself held (as a recovery waiting for it would): the flush stops before its check.
    const { recovery, blocker, flush, warnings } = await likeWithFlushHeld(
      '2',
      '8',
      'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))',
      [`floodgate:flush-fence:${keys.epoch()}`],
    )
    try {
      await deleteByPrefix(redis, prefix)
      await blocker.query('COMMIT')
      const skips = () => warnings.filter((w) => 'skipped' in w)
      for (let i = 0; i < 200 && skips().length === 0; i++) await sleep(10)
      expect((await recovery.rebuild()).rebuilt).toBe(true)
    } finally {
      blocker.release()
      await flush.stop()
    }

    // (the consumer also warns of NOGROUP reads until it has made the group again)
    expect(warnings.filter((w) => 'skipped' in w)).toEqual([expect.objectContaining({ skipped: 1 })])
    expect(await likedIn('2', '8')).toEqual({ redis: 0, db: 0 })
  }, 20_000)
})
