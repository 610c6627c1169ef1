import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  createInteractionFlush,
  InteractionApplier,
  type InteractionEvent,
  InteractionKeys,
  isPoisonError,
  netEvents,
  parseInteractionEvent,
} from '../../src/interactions/index.js'
import { pgPoolDatabase, type SqlDatabase, type SqlExecutor } from '../../src/sql/executor.js'
import type { StreamEntry } from '../../src/stream/types.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { createTestSchema, type TestSchema } from './pg_schema.js'

// The applier's two loading paths: COPY into the staging table (pg with pg-copy-streams) and the
// same rows as unnest parameters (PGlite, Kysely). Each path gets its own schema.
const PATHS = [
  { path: 'COPY', copy: true },
  { path: 'unnest', copy: false },
] as const

let clock = 1_800_000_000_000
function membership(item: number, user: number, active: boolean, kind: 'like' | 'favorite' = 'like') {
  clock += 1
  return parseInteractionEvent({
    stream: 's',
    id: `${clock}-0`,
    fields: { k: kind, v: String(item), u: String(user), s: active ? '1' : '0', t: String(clock) },
  })
}
function play(item: number, viewer: string): InteractionEvent {
  clock += 1
  return parseInteractionEvent({
    stream: 's',
    id: `${clock}-0`,
    fields: { k: 'play', v: String(item), w: viewer, t: String(clock) },
  })
}

/** An executor counting the statements and COPYs sent through it. */
function counted(tx: SqlExecutor) {
  const calls = { queries: 0, copies: 0 }
  const executor: SqlExecutor = {
    query: (text, params) => {
      calls.queries++
      return tx.query(text, params)
    },
    ...(tx.copyFrom && {
      copyFrom: (statement: string, data: string) => {
        calls.copies++
        return tx.copyFrom!(statement, data)
      },
    }),
  }
  return { executor, calls }
}

describe.each(PATHS)('the set-based apply, loaded by $path', ({ copy }) => {
  let schema: TestSchema
  let db: SqlDatabase
  const applier = new InteractionApplier()

  beforeAll(async () => {
    schema = await createTestSchema(copy ? 'merge_copy' : 'merge_unnest', 20)
    db = copy ? schema.db : pgPoolDatabase(schema.pool)
  })
  afterAll(async () => {
    await schema.drop()
  })

  async function state(item: number) {
    const { rows } = await schema.pool.query(
      `SELECT like_count, favorite_count, play_count,
         (SELECT count(*) FROM item_likes WHERE item_id = $1) AS likes,
         (SELECT count(*) FROM item_favorites WHERE item_id = $1) AS favorites,
         (SELECT count(*) FROM item_plays WHERE item_id = $1) AS plays
       FROM items WHERE id = $1`,
      [item],
    )
    return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]))
  }

  async function likers(item: number): Promise<number[]> {
    const { rows } = await schema.pool.query(
      'SELECT user_id::int AS u FROM item_likes WHERE item_id = $1 ORDER BY 1',
      [item],
    )
    return rows.map((r: { u: number }) => r.u)
  }

  it(
    copy
      ? 'loads a batch with one COPY, then two statements after the lock'
      : 'applies a batch in three statements',
    async () => {
      const batch = netEvents([
        membership(1, 1, true),
        membership(1, 2, true),
        play(1, 'u1'),
        membership(2, 1, true, 'favorite'),
      ])
      await applier.apply(db, [membership(1, 9, true)]) // the session's staging table exists from here on
      const calls = await db.transaction(async (tx) => {
        const { executor, calls } = counted(tx)
        await applier.applyNetted(executor, batch.memberships, batch.plays)
        return calls
      })
      expect(calls).toEqual(copy ? { queries: 3, copies: 1 } : { queries: 3, copies: 0 })
      expect(await state(1)).toMatchObject({ like_count: 3, likes: 3, play_count: 1, plays: 1 })
    },
  )

  it("moves each item's count columns with one row update per batch", async () => {
    const batch = netEvents([
      membership(3, 1, true),
      membership(3, 2, true),
      membership(3, 1, true, 'favorite'),
      play(3, 'u1'),
      play(3, 'u2'),
      membership(4, 1, true),
      play(4, 'u1'),
    ])
    // a row trigger records every update of an items row
    await schema.pool.query(`CREATE TABLE IF NOT EXISTS item_updates (id bigint NOT NULL);
      CREATE OR REPLACE FUNCTION record_item_update() RETURNS trigger LANGUAGE plpgsql AS
        'BEGIN INSERT INTO item_updates VALUES (NEW.id); RETURN NEW; END';
      CREATE OR REPLACE TRIGGER item_updates AFTER UPDATE ON items FOR EACH ROW EXECUTE FUNCTION record_item_update()`)
    try {
      await db.transaction((tx) => applier.applyNetted(tx, batch.memberships, batch.plays))
    } finally {
      await schema.pool.query('DROP TRIGGER item_updates ON items')
    }
    const { rows } = await schema.pool.query(
      'SELECT id::int, count(*)::int AS n FROM item_updates GROUP BY id ORDER BY id',
    )
    expect(rows).toEqual([
      { id: 3, n: 1 },
      { id: 4, n: 1 },
    ])
    expect(await state(3)).toMatchObject({
      like_count: 2,
      favorite_count: 1,
      play_count: 2,
      likes: 2,
      favorites: 1,
      plays: 2,
    })
    expect(await state(4)).toMatchObject({ like_count: 1, play_count: 1 })
  })

  it('nets unlike after like in one batch, and applies it across batches', async () => {
    await applier.apply(db, [membership(5, 1, true), membership(5, 1, false), membership(5, 2, true)])
    expect(await likers(5)).toEqual([2])
    await applier.apply(db, [membership(5, 2, false)])
    expect(await likers(5)).toEqual([])
    expect(await state(5)).toMatchObject({ like_count: 0, likes: 0 })
  })

  it('a redelivered batch changes nothing, also after newer events of its keys were applied', async () => {
    const first = [membership(6, 1, true), membership(6, 2, true), play(6, 'u7')]
    await applier.apply(db, first)
    await applier.apply(db, [membership(6, 1, false)])
    const again = await applier.apply(db, first) // crash between COMMIT and XACK: delivered again
    expect(again).toMatchObject({ advanced: 0, likesAdded: 0, likesRemoved: 0, playsAdded: 0 })
    expect(await likers(6)).toEqual([2])
    expect(await state(6)).toMatchObject({ like_count: 1, play_count: 1, plays: 1 })
  })

  it('an older entry claimed late changes nothing of what is newer, in a batch with entries that do apply', async () => {
    const older = membership(7, 1, true)
    const newer = membership(7, 1, false)
    await applier.apply(db, [newer])
    const late = await applier.apply(db, [older, membership(7, 2, true), membership(8, 1, true, 'favorite')])
    expect(late).toMatchObject({ advanced: 2, likesAdded: 1, favoritesAdded: 1 })
    expect(await likers(7)).toEqual([2])
    expect(await state(8)).toMatchObject({ favorite_count: 1, favorites: 1 })
  })

  it('drops the events of items missing from the items table and applies the rest of the batch', async () => {
    const result = await applier.apply(db, [
      membership(999, 1, true),
      play(999, 'u1'),
      membership(9, 1, true),
      play(9, 'u1'),
    ])
    expect(result).toMatchObject({ advanced: 1, likesAdded: 1, playsAdded: 1 })
    expect(await state(9)).toMatchObject({ like_count: 1, play_count: 1 })
    const { rows } = await schema.pool.query(
      'SELECT (SELECT count(*) FROM item_likes WHERE item_id = 999) + (SELECT count(*) FROM item_plays WHERE item_id = 999) + (SELECT count(*) FROM interaction_watermarks WHERE item_id = 999) AS n',
    )
    expect(Number(rows[0].n)).toBe(0)
  })

  it('applies again after its session lost the staging table (the failed batch is a transient error)', async () => {
    // one connection, so the DISCARD and the batches share a session
    const pool = (await import('../support/pg_schema.js')).schemaPool(schema.name, 1)
    const { from } = await import('pg-copy-streams')
    const single = pgPoolDatabase(pool, copy ? { copyFrom: from } : {})
    const own = new InteractionApplier()
    try {
      await own.apply(single, [membership(10, 1, true)])
      await pool.query('DISCARD TEMP')
      const lost = await own.apply(single, [membership(10, 2, true)]).catch((error: unknown) => error)
      expect((lost as { code?: string }).code).toBe('42P01')
      expect(isPoisonError(lost)).toBe(false)
      await own.apply(single, [membership(10, 2, true)])
      expect(await likers(10)).toEqual([1, 2])
    } finally {
      await pool.end()
    }
  })
})

describe('the flush handler around the apply', () => {
  const redis = testRedisClient()
  const prefix = uniquePrefix('merge-flush')
  const keys = new InteractionKeys(prefix, 2)
  let schema: TestSchema

  beforeAll(async () => {
    schema = await createTestSchema('merge_flush', 5)
  })
  afterAll(async () => {
    await deleteByPrefix(redis, prefix)
    redis.disconnect()
    await schema.drop()
  })

  /** Appends like events for item 1 by `users` and reads them as consumer `reader` (pending on it). */
  async function pendingOn(reader: string, users: number[]): Promise<StreamEntry[]> {
    const stream = keys.stream(keys.partitionOf('1'))
    await redis.call('XGROUP', 'CREATE', stream, 'flush', '$', 'MKSTREAM').catch(() => undefined)
    for (const u of users)
      await redis.xadd(stream, '*', 'k', 'like', 'v', '1', 'u', String(u), 's', '1', 't', String(Date.now()))
    const reply = (await redis.call(
      'XREADGROUP',
      'GROUP',
      'flush',
      reader,
      'COUNT',
      100,
      'STREAMS',
      stream,
      '>',
    )) as unknown
    const { parseReadReply } = await import('../../src/stream/replies.js')
    return parseReadReply(reply)
  }

  it('checks that the entries are still pending without claiming them, and applies them once however often delivered', async () => {
    const flush = createInteractionFlush(redis, schema.db, { prefix, partitions: 2, consumerName: 'applier' })
    const entries = await pendingOn('reader', [1, 2])
    // delivered to 'reader', handled by 'applier' (a partition moving between consumers)
    await flush.options.handler(entries)
    const owners = (await redis.call('XPENDING', entries[0]!.stream, 'flush', '-', '+', 10)) as [
      string,
      string,
    ][]
    expect(owners.map(([, consumer]) => consumer)).toEqual(['reader', 'reader'])
    // crash between COMMIT and XACK: the same entries once more
    await flush.options.handler(entries)
    const { rows } = await schema.pool.query('SELECT like_count::int AS n FROM items WHERE id = 1')
    expect(rows[0].n).toBe(2)
    // acknowledged by another consumer meanwhile: skipped
    await redis.xack(entries[0]!.stream, 'flush', entries[0]!.id)
    await schema.pool.query(
      'DELETE FROM item_likes WHERE item_id = 1; DELETE FROM interaction_watermarks WHERE item_id = 1',
    )
    await flush.options.handler(entries)
    const likes = await schema.pool.query('SELECT user_id::int AS u FROM item_likes WHERE item_id = 1')
    expect(likes.rows).toEqual([{ u: 2 }])
  })
})
