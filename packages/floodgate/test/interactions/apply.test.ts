import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  InteractionApplier,
  type InteractionEvent,
  InvalidEventError,
  isPoisonError,
  netEvents,
  parseInteractionEvent,
} from '../../src/interactions/index.js'
import { createTestSchema, type TestSchema } from './pg_schema.js'

let schema: TestSchema
const applier = new InteractionApplier()

beforeAll(async () => {
  schema = await createTestSchema('apply', 20)
})
afterAll(async () => {
  await schema.drop()
})

let clock = 1_700_000_000_000
function like(
  video: number,
  user: number,
  active: boolean,
  kind: 'like' | 'favorite' = 'like',
): InteractionEvent {
  clock += 1
  return parseInteractionEvent({
    stream: 's',
    id: `${clock}-0`,
    fields: { k: kind, v: String(video), u: String(user), s: active ? '1' : '0', t: String(clock) },
  })
}
function play(video: number, id: string, viewer = 'u1'): InteractionEvent {
  return parseInteractionEvent({
    stream: 's',
    id,
    fields: { k: 'play', v: String(video), w: viewer, t: '1' },
  })
}

async function state(video: number) {
  const { rows } = await schema.pool.query(
    `SELECT like_count, favorite_count, play_count,
       (SELECT count(*) FROM item_likes WHERE item_id = $1) AS likes,
       (SELECT count(*) FROM item_favorites WHERE item_id = $1) AS favorites,
       (SELECT count(*) FROM item_plays WHERE item_id = $1) AS plays
     FROM items WHERE id = $1`,
    [video],
  )
  return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]))
}

describe('batch apply (test 2)', () => {
  it('applies a batch with the same key twice and like → unlike → like as its net effect, in one go', async () => {
    const batch = [
      like(1, 1, true),
      like(1, 1, true),
      like(1, 2, true),
      like(1, 2, false),
      like(1, 2, true),
      like(1, 3, true),
      like(1, 3, false),
      like(1, 1, true, 'favorite'),
      like(1, 1, true, 'favorite'),
      play(1, '5-0'),
      play(1, '5-0'),
      play(1, '5-1'),
    ]
    const result = await applier.apply(schema.db, batch)
    expect(result).toMatchObject({ likesAdded: 2, likesRemoved: 0, favoritesAdded: 1, playsAdded: 2 })
    expect(await state(1)).toEqual({
      like_count: 2,
      favorite_count: 1,
      play_count: 2,
      likes: 2,
      favorites: 1,
      plays: 2,
    })
    const { rows } = await schema.pool.query(
      'SELECT user_id::int, active FROM interaction_watermarks WHERE kind = 1 AND item_id = 1 ORDER BY user_id',
    )
    expect(rows).toEqual([
      { user_id: 1, active: true },
      { user_id: 2, active: true },
      { user_id: 3, active: false },
    ])
  })

  it('is idempotent: the same batch again changes nothing', async () => {
    const batch = [like(2, 1, true), like(2, 2, true), play(2, '9-0')]
    await applier.apply(schema.db, batch)
    const again = await applier.apply(schema.db, batch)
    expect(again).toMatchObject({ advanced: 0, likesAdded: 0, playsAdded: 0 })
    expect(await state(2)).toMatchObject({ like_count: 2, likes: 2, play_count: 1, plays: 1 })
  })

  it('is order-safe: an older event applied late never overwrites a newer one, across batches', async () => {
    const older = like(3, 1, true)
    const newer = like(3, 1, false)
    await applier.apply(schema.db, [newer])
    const late = await applier.apply(schema.db, [older])
    expect(late.advanced).toBe(0)
    expect(await state(3)).toMatchObject({ like_count: 0, likes: 0 })
    // and the newer like after an unlike still applies
    await applier.apply(schema.db, [like(3, 1, true)])
    expect(await state(3)).toMatchObject({ like_count: 1, likes: 1 })
  })

  it('sees a concurrent batch that committed while it waited for the same key (fresh snapshot)', async () => {
    const older = like(6, 1, true)
    const newer = like(6, 1, false)
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const first = schema.db.transaction(async (tx) => {
      await applier.applyNetted(tx, netEvents([older]).memberships, [])
      await gate
    })
    await sleep(50)
    const second = applier.apply(schema.db, [newer]) // blocks on the watermark row lock
    await sleep(150)
    release()
    await first
    expect(await second).toMatchObject({ advanced: 1, likesRemoved: 1 })
    expect(await state(6)).toMatchObject({ like_count: 0, likes: 0 })
  })

  it('orders stream ids numerically, not as strings', () => {
    const a = parseInteractionEvent({
      stream: 's',
      id: '9-5',
      fields: { k: 'like', v: '4', u: '1', s: '1', t: '9' },
    })
    const b = parseInteractionEvent({
      stream: 's',
      id: '10-0',
      fields: { k: 'like', v: '4', u: '1', s: '0', t: '10' },
    })
    const c = parseInteractionEvent({
      stream: 's',
      id: '9-10',
      fields: { k: 'like', v: '4', u: '1', s: '1', t: '9' },
    })
    expect(netEvents([b, a, c]).memberships).toEqual([b])
    expect(netEvents([a, c]).memberships).toEqual([c])
  })

  it('skips events for videos missing from the database, counts untouched', async () => {
    const result = await applier.apply(schema.db, [like(999, 1, true), play(999, '11-0')])
    expect(result).toMatchObject({ advanced: 0, likesAdded: 0, playsAdded: 0 })
    const { rows } = await schema.pool.query('SELECT count(*)::int AS n FROM item_likes WHERE item_id = 999')
    expect(rows[0].n).toBe(0)
  })

  it('classifies malformed events and integrity errors as poison, connection errors as transient', async () => {
    expect(() =>
      parseInteractionEvent({
        stream: 's',
        id: '1-0',
        fields: { k: 'like', v: 'x', u: '1', s: '1', t: '1' },
      }),
    ).toThrow(InvalidEventError)
    expect(() =>
      parseInteractionEvent({ stream: 's', id: '1-0', fields: { k: 'poke', v: '1', t: '1' } }),
    ).toThrow(InvalidEventError)
    const fk = await applier.apply(schema.db, [like(5, 99_999_999, true)]).catch((e: unknown) => e)
    expect((fk as { code?: string }).code).toBe('23503')
    expect(isPoisonError(fk)).toBe(true)
    expect(await state(5)).toMatchObject({ like_count: 0, likes: 0 })
    expect(isPoisonError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      false,
    )
    expect(isPoisonError(Object.assign(new Error('terminating connection'), { code: '57P01' }))).toBe(false)
    expect(isPoisonError(Object.assign(new Error('deadlock'), { code: '40P01' }))).toBe(false)
  })
})
