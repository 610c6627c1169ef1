import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { TEST_DATABASE_URL } from '@floodgate/test-support'
import pg from 'pg'
import { Registry } from 'prom-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createInteractionFlush, Interactions, playViewer } from '../../src/interactions/index.js'
import { pgPoolDatabase } from '../../src/sql/executor.js'
import type { StreamGroupConsumer } from '../../src/stream/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { waitDrained } from './drain.js'
import { createTestSchema, type TestSchema } from './pg_schema.js'
import { compareRedisWithDatabase } from './verify.js'

const VIDEOS = 20
const PARTITIONS = 4
const redis = testRedisClient(5000)
const prefix = uniquePrefix('ix-outage')
const ix = new Interactions(redis, { prefix, partitions: PARTITIONS, playDedupeWindowMs: 100 })
const role = `fg_flush_${randomBytes(4).toString('hex')}`
let schema: TestSchema
let admin: pg.Client
let rolePool: pg.Pool
let flush: StreamGroupConsumer

beforeAll(async () => {
  schema = await createTestSchema('outage', VIDEOS)
  admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
  await admin.connect()
  await admin.query(`CREATE ROLE ${role} LOGIN`)
  await admin.query(`GRANT USAGE ON SCHEMA ${schema.name} TO ${role}`)
  await admin.query(
    `GRANT SELECT, INSERT, UPDATE, DELETE, REFERENCES ON ALL TABLES IN SCHEMA ${schema.name} TO ${role}`,
  )
  const url = new URL(TEST_DATABASE_URL)
  url.username = role
  rolePool = new pg.Pool({
    connectionString: url.toString(),
    max: 2,
    options: `-c search_path=${schema.name}`,
  })
  rolePool.on('error', () => undefined) // idle clients terminated during the outage
})
afterAll(async () => {
  await flush?.stop()
  await rolePool.end()
  await schema.drop()
  await admin.query(`DROP ROLE IF EXISTS ${role}`)
  await admin.end()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

/** The database goes away for the flush: its role may not log in, and its sessions are killed. */
async function outage(down: boolean): Promise<void> {
  await admin.query(`ALTER ROLE ${role} ${down ? 'NOLOGIN' : 'LOGIN'}`)
  if (down)
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role])
}

describe('PostgreSQL outage and poison events (test 4)', () => {
  it('loses and duplicates nothing across an outage, and dead-letters poison events', async () => {
    const errors: string[] = []
    const registry = new Registry()
    flush = createInteractionFlush(redis, pgPoolDatabase(rolePool), {
      prefix,
      partitions: PARTITIONS,
      batchSize: 200,
      blockMs: 100,
      claimIdleMs: 300,
      claimIntervalMs: 100,
      maxDeliveries: 3,
      maintenanceIntervalMs: 100,
      registry,
      backoffBaseMs: 20,
      backoffMaxMs: 200,
      onEvent: (e) => {
        if (e.type === 'error') errors.push(String((e.error as Error).message))
      },
    })
    flush.start()

    const playIds: string[] = []
    let stop = false
    const lanes = Array.from({ length: 8 }, async (_, lane) => {
      let i = 0
      while (!stop) {
        i++
        const video = 1 + ((i * 7 + lane) % VIDEOS)
        const user = 1 + ((i * 13 + lane * 5) % 50)
        if (i % 3 === 0) {
          const r = await ix.recordPlay(video, playViewer({ userId: user }))
          if (r.counted) playIds.push(`${video}:${r.eventId}`)
        } else if (i % 3 === 1) await ix.setLiked(video, user, i % 2 === 0)
        else await ix.setFavorited(video, user, i % 4 !== 0)
        await sleep(1)
      }
    })

    await sleep(500)
    // poison: a malformed entry, and one PostgreSQL rejects (a like by a user that does not exist)
    const malformed = (await redis.xadd(
      ix.keys.stream(1),
      '*',
      'k',
      'like',
      'v',
      'x',
      'u',
      '1',
      's',
      '1',
      't',
      '1',
    ))!
    const unknownUser = (await redis.xadd(
      ix.keys.stream(ix.keys.partitionOf('2')),
      '*',
      ...['k', 'like', 'v', '2', 'u', '99999999', 's', '1', 't', String(Date.now())],
    ))!

    await outage(true)
    const rowsBefore = await countRows()
    await sleep(1500)
    expect(await countRows()).toEqual(rowsBefore) // nothing reached the database
    const during = await flush.maintain()
    expect(during.pending + during.undelivered).toBeGreaterThan(0)
    expect(flush.stats.transientFailures).toBeGreaterThan(0)
    expect(flush.stats.deadLettered).toBe(0) // an outage never dead-letters
    // the lag gauges keep moving while the consumer is stuck retrying
    const gauge = async (name: string) =>
      Number(/ (\S+)$/.exec((await registry.getSingleMetricAsString(name)).trim())?.[1])
    expect(
      (await gauge('floodgate_interactions_flush_pending')) +
        (await gauge('floodgate_interactions_flush_undelivered')),
    ).toBeGreaterThan(0)
    expect(await gauge('floodgate_interactions_flush_oldest_pending_age_seconds')).toBeGreaterThan(0.5)
    await outage(false)

    await sleep(1000)
    stop = true
    await Promise.all(lanes)
    await waitDrained(flush, 30_000)

    expect(errors.some((m) => /terminat|not permitted|Connection/i.test(m))).toBe(true)
    expect(await compareRedisWithDatabase(redis, schema.pool, ix.keys, VIDEOS)).toEqual([])
    const { rows } = await schema.pool.query('SELECT event_id FROM item_plays ORDER BY event_id')
    expect(rows.map((r: { event_id: string }) => r.event_id)).toEqual([...playIds].sort())

    const letters = [
      ...(await redis.xrange(ix.keys.dead(1), '-', '+')),
      ...(await redis.xrange(ix.keys.dead(ix.keys.partitionOf('2')), '-', '+')),
    ].map(([, fields]) =>
      Object.fromEntries(fields.flatMap((_, i) => (i % 2 ? [] : [[fields[i], fields[i + 1]]]))),
    )
    // ids are unique per stream only (both poison entries may share one), so key by stream too
    const byId = new Map(letters.map((l) => [`${l._stream}/${l._id}`, l]))
    expect(byId.size).toBe(2)
    const malformedLetter = byId.get(`${ix.keys.stream(1)}/${malformed}`)
    const unknownUserLetter = byId.get(`${ix.keys.stream(ix.keys.partitionOf('2'))}/${unknownUser}`)
    expect(malformedLetter?._error).toContain('FLOODGATE_INVALID_EVENT')
    expect(unknownUserLetter?._error).toContain('23503')
    expect(unknownUserLetter?._deliveries).toBe('3')
    expect(flush.stats.deadLettered).toBe(2)
  }, 60_000)
})

async function countRows() {
  const { rows } = await schema.pool.query(
    `SELECT (SELECT count(*) FROM item_likes)::int AS likes, (SELECT count(*) FROM item_favorites)::int AS favs,
      (SELECT count(*) FROM item_plays)::int AS plays, (SELECT sum(like_count)::int FROM items) AS like_count`,
  )
  return rows[0]
}
