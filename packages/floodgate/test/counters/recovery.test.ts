import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { CountsReader, CountsRecovery, Interactions, type RecoveryEvent, toMember } from '../../src/index.js'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { type CountersSchema, createCountersSchema, seedMembers, seedPlays } from './pg_schema.js'

const redis = testRedisClient()
const prefix = uniquePrefix('recov')
const P = 4
let schema: CountersSchema
const interactions = new Interactions(redis, { prefix, partitions: P })
const keys = interactions.keys
const lockKey = `{${keys.epoch()}}:rebuild`

function recovery(extra: Partial<ConstructorParameters<typeof CountsRecovery>[0]> = {}) {
  return new CountsRecovery({ redis, sql: schema.db, prefix, partitions: P, checkIntervalMs: 50, ...extra })
}

async function dbCounts(): Promise<Record<string, [number, number, number]>> {
  const { rows } = await schema.db.query<{ id: string; l: string; f: string; p: string }>(
    'SELECT id::text AS id, like_count AS l, favorite_count AS f, play_count AS p FROM items ORDER BY id',
  )
  return Object.fromEntries(rows.map((r) => [r.id, [Number(r.l), Number(r.f), Number(r.p)]]))
}

beforeAll(async () => {
  schema = await createCountersSchema('recov', 30)
  // Video 1: 3 likes, 1 favourite, 7 plays; 2: 250 likes (spans chunks); 3: 5 plays; 30: 1 like.
  await seedMembers(schema.db, 'likes', 1, [1, 2, 3])
  await seedMembers(schema.db, 'favorites', 1, [2])
  await seedPlays(schema.db, 1, 7)
  await seedMembers(
    schema.db,
    'likes',
    2,
    Array.from({ length: 250 }, (_, i) => i + 1),
  )
  await seedPlays(schema.db, 3, 5)
  await seedMembers(schema.db, 'likes', 30, [9])
})

beforeEach(async () => {
  await deleteByPrefix(redis, prefix)
  await redis.del(lockKey, `${lockKey}:fence`)
})

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  await redis.del(lockKey, `${lockKey}:fence`)
  redis.disconnect()
  await schema.drop()
})

describe('CountsRecovery', () => {
  it('first boot: marker missing, rebuilds sets, counters and all-time rankings from the DB, then sets the marker', async () => {
    const events: RecoveryEvent[] = []
    const r = recovery({ chunkSize: 40, onEvent: (e) => events.push(e) })
    const reader = new CountsReader({ redis, prefix, partitions: P, recovery: r, timeoutMs: 2000 })
    expect(r.serving()).toBe(false)
    expect(await reader.readCounts(['1'])).toEqual({ ok: false, reason: 'rebuilding' })
    expect(await r.check()).toBe('rebuilding')
    for (let i = 0; i < 200 && r.state !== 'ready'; i++) await sleep(10)
    expect(r.state).toBe('ready')
    expect(events.map((e) => e.type)).toEqual(['epoch-missing', 'rebuild-started', 'rebuilt'])
    expect(await redis.get(keys.epoch())).toMatch(/^[0-9a-f]{16}$/)
    const read = await reader.readCounts(['1', '2', '3', '30'], '2')
    expect(read.ok).toBe(true)
    if (!read.ok) return
    expect(read.counts.get('1')).toEqual({ likes: 3, favorites: 1, plays: 7, liked: true, favorited: true })
    expect(read.counts.get('2')).toMatchObject({ likes: 250, plays: 0, liked: true })
    expect(read.counts.get('3')).toMatchObject({ likes: 0, plays: 5 })
    expect(await redis.zrevrange(keys.rankAll(keys.partitionOf('2'), 'likes'), 0, -1, 'WITHSCORES')).toEqual([
      toMember('2'),
      '250',
      toMember('30'),
      '1',
    ])
    expect(await redis.zscore(keys.rankAll(keys.partitionOf('1'), 'plays'), toMember('1'))).toBe('7')
    const report = await r.reconcile()
    expect(report).toEqual({ checked: 30, drifted: [], columnDrift: [] })
  })

  it('waitUntilServing: a fresh deployment serves Redis counts once the start-up rebuild committed', async () => {
    const r = recovery()
    expect(await r.waitUntilServing(5000)).toBe(true)
    expect(await redis.scard(keys.likes('2'))).toBe(250)
    await redis.del(keys.epoch())
    const other = recovery()
    await redis.set(lockKey, 'someone-else', 'PX', 60_000) // another instance is rebuilding
    expect(await other.waitUntilServing(200)).toBe(false)
    expect(other.state).toBe('rebuilding')
    await redis.del(lockKey)
  })

  it('after a loss, merge keeps memberships written since, and never writes the DB', async () => {
    const before = await dbCounts()
    // The loss: Redis empty. A like and a play land before the rebuild.
    await interactions.setLiked('1', '77', true)
    await redis.set(keys.plays('3'), '2')
    const r = recovery()
    const outcome = await r.rebuild()
    expect(outcome.rebuilt).toBe(true)
    expect((await redis.smembers(keys.likes('1'))).sort()).toEqual(['1', '2', '3', '77'])
    expect(await redis.get(keys.plays('3'))).toBe('5')
    expect(await redis.zscore(keys.rankAll(keys.partitionOf('1'), 'likes'), toMember('1'))).toBe('4')
    expect(await dbCounts()).toEqual(before)
    const report = await r.reconcile()
    expect(report.drifted).toEqual([
      { itemId: '1', redis: { likes: 4, favorites: 1, plays: 7 }, db: { likes: 3, favorites: 1, plays: 7 } },
    ])
    expect(report.columnDrift).toEqual([])
  })

  it('restoreItem lets an unlike during the rebuild find the member (and emit its event)', async () => {
    const r = recovery()
    expect(await interactions.setLiked('1', '2', false)).toMatchObject({ changed: false }) // lost unlike without it
    expect(await r.restoreItem('1')).toEqual({ likes: 3, favorites: 1, plays: 7 })
    expect(await r.restoreItem('1')).toEqual({ likes: 3, favorites: 1, plays: 7 })
    const unlike = await interactions.setLiked('1', '2', false)
    expect(unlike).toMatchObject({ changed: true, count: 2 })
    // The DB still has user 2's like (the unlike is not flushed): restoring again before the next
    // toggle must not put it back, or the re-like would change nothing and emit no event.
    expect(await r.restoreItem('1')).toEqual({ likes: 2, favorites: 1, plays: 7 })
    expect(await interactions.setLiked('1', '2', true)).toMatchObject({ changed: true, count: 3 })
    // The bulk rebuild skips videos already restored.
    await interactions.setLiked('1', '3', false)
    expect((await r.rebuild()).rebuilt).toBe(true)
    expect((await redis.smembers(keys.likes('1'))).sort()).toEqual(['1', '2'])
    expect(await r.restoreItem('29')).toEqual({ likes: 0, favorites: 0, plays: 0 })
  })

  it('replace makes Redis equal to the DB and serves DB counts meanwhile', async () => {
    await redis.set(keys.epoch(), 'old')
    await redis.sadd(keys.likes('1'), '1', '2', '3', '555')
    await redis.set(keys.plays('1'), '100')
    const r = recovery()
    await r.check()
    expect(r.serving()).toBe(true)
    const outcome = await r.rebuild({ mode: 'replace' })
    expect(outcome.rebuilt).toBe(true)
    expect((await redis.smembers(keys.likes('1'))).sort()).toEqual(['1', '2', '3'])
    expect(await redis.get(keys.plays('1'))).toBe('7')
    expect(await redis.get(keys.epoch())).not.toBe('old')
    expect((await r.reconcile()).drifted).toEqual([])
  })

  it('a loss during the rebuild (lock gone) is not hidden: no marker, state stays rebuilding', async () => {
    const r = recovery({
      chunkSize: 10,
      onEvent: (e) => {
        if (e.type === 'rebuild-started') void redis.del(lockKey)
      },
    })
    const outcome = await r.rebuild()
    expect(outcome).toMatchObject({ rebuilt: false, reason: 'aborted' })
    expect(await redis.get(keys.epoch())).toBeNull()
    expect(r.serving()).toBe(false)
  })

  it('several processes see the marker missing: exactly one rebuilds, all end up serving', async () => {
    const startAt = Date.now() + 1500
    const workers = [0, 1, 2].map(() =>
      spawnWorker(new URL('./workers/recovery_worker.ts', import.meta.url), [
        prefix,
        schema.name,
        String(startAt),
      ]),
    )
    const done = (await Promise.all(
      workers.map((w) => w.waitFor((m) => (m as { done?: boolean }).done === true, 25_000)),
    )) as { state: string; events: string[] }[]
    await Promise.all(workers.map((w) => w.exited))
    expect(done.map((d) => d.state)).toEqual(['ready', 'ready', 'ready'])
    expect(done.flatMap((d) => d.events).filter((e) => e === 'rebuilt')).toHaveLength(1)
    expect(done.flatMap((d) => d.events).filter((e) => e === 'rebuild-started')).toHaveLength(1)
    expect(await redis.scard(keys.likes('2'))).toBe(250)
  })

  it('an item marked deleted (tables.items.deletedAt) is left out of the rebuild, restoreItem and reconcile', async () => {
    await schema.db.query('ALTER TABLE items ADD COLUMN IF NOT EXISTS deleted_at timestamptz')
    await schema.db.query('UPDATE items SET deleted_at = now() WHERE id IN (3, 30)')
    try {
      const r = recovery({ tables: { items: { deletedAt: 'deleted_at' } } })
      const outcome = await r.rebuild({ mode: 'replace' })
      // 254 like rows, less item 30's one; replace sets every live item's counter: 30 less 2
      expect(outcome).toMatchObject({ rebuilt: true, report: { likeRows: 253, playItems: 28 } })
      expect(await redis.exists(keys.likes('30'))).toBe(0) // one key per EXISTS: they lie in different slots
      expect(await redis.exists(keys.plays('3'))).toBe(0)
      expect(await redis.scard(keys.likes('1'))).toBe(3)
      expect(await r.restoreItem('30')).toEqual({ likes: 0, favorites: 0, plays: 0 })
      expect(await redis.exists(keys.likes('30'))).toBe(0)
      const report = await r.reconcile()
      expect(report).toMatchObject({ checked: 28, drifted: [] })
    } finally {
      await schema.db.query('UPDATE items SET deleted_at = NULL')
    }
  })
})
