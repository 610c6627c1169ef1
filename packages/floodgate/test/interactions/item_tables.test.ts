import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CountsReader,
  CountsRecovery,
  createInteractionFlush,
  createRankings,
  Interactions,
  interactionLayout,
  interactionSchemaSql,
  playViewer,
  type StreamGroupConsumer,
} from '../../src/index.js'
import { createPgTestSchema, type PgTestSchema } from '../support/pg_schema.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { waitDrained } from './drain.js'

// The engine counts any item, not only videos: articles with their own table, columns and
// detail tables, schema-qualified, and no table of the defaults anywhere.
const redis = testRedisClient()
const prefix = uniquePrefix('ix-items')
let schema: PgTestSchema
let layout: ReturnType<typeof interactionLayout>
let flush: StreamGroupConsumer | undefined

beforeAll(async () => {
  schema = await createPgTestSchema('items', async (admin) => {
    await admin.query(`CREATE TABLE articles (
      article_id bigint PRIMARY KEY, title text NOT NULL DEFAULT '',
      likes_n bigint NOT NULL DEFAULT 0, favs_n bigint NOT NULL DEFAULT 0, reads_n bigint NOT NULL DEFAULT 0)`)
    await admin.query('INSERT INTO articles (article_id) SELECT generate_series(1, 5)')
  })
  layout = interactionLayout({
    prefix,
    partitions: 3,
    tables: {
      items: {
        table: `${schema.name}.articles`,
        id: 'article_id',
        likeCount: 'likes_n',
        favoriteCount: 'favs_n',
        playCount: 'reads_n',
      },
      itemIdColumn: 'article_id',
      likes: `${schema.name}.article_likes`,
      favorites: `${schema.name}.article_favorites`,
      plays: `${schema.name}.article_reads`,
      watermarks: `${schema.name}.article_watermarks`,
    },
  })
  for (const statement of interactionSchemaSql(layout.tables)) await schema.db.query(statement)
})

afterAll(async () => {
  await flush?.stop()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
  await schema.drop()
})

async function columns(): Promise<Record<string, number[]>> {
  const { rows } = await schema.db.query<{ id: string; l: string; f: string; p: string }>(
    'SELECT article_id::text AS id, likes_n AS l, favs_n AS f, reads_n AS p FROM articles ORDER BY article_id',
  )
  return Object.fromEntries(rows.map((r) => [r.id, [Number(r.l), Number(r.f), Number(r.p)]]))
}

describe('an item other than a video, with its own table and column names', () => {
  it('flushes into the configured tables, reads its counts, ranks it and rebuilds Redis from it', async () => {
    const interactions = new Interactions(redis, { ...layout })
    const recovery = new CountsRecovery({ ...layout, redis, sql: schema.db })
    expect((await recovery.rebuild()).rebuilt).toBe(true) // empty tables: sets the epoch marker
    const reader = new CountsReader({ ...layout, redis, recovery, timeoutMs: 2000 })
    await recovery.check()

    // article 1: 2 likes; 2: 1 like, 1 favourite, 2 reads; 4: liked then unliked
    await interactions.setLiked('1', '10', true)
    await interactions.setLiked('1', '11', true)
    await interactions.setLiked('2', '10', true)
    await interactions.setFavorited('2', '12', true)
    await interactions.recordPlay('2', playViewer({ userId: '10' }))
    await interactions.recordPlay('2', playViewer({ userId: '11' }))
    await interactions.setLiked('4', '13', true)
    await interactions.setLiked('4', '13', false)

    flush = createInteractionFlush(redis, schema.db, { ...layout, blockMs: 50 })
    flush.start()
    await waitDrained(flush)
    expect(await columns()).toEqual({
      '1': [2, 0, 0],
      '2': [1, 1, 2],
      '3': [0, 0, 0],
      '4': [0, 0, 0],
      '5': [0, 0, 0],
    })
    const likes = await schema.db.query<{ article_id: string; user_id: string }>(
      'SELECT article_id::text, user_id::text FROM article_likes ORDER BY 1, 2',
    )
    expect(likes.rows).toEqual([
      { article_id: '1', user_id: '10' },
      { article_id: '1', user_id: '11' },
      { article_id: '2', user_id: '10' },
    ])
    const watermarks = await schema.db.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM article_watermarks',
    )
    expect(watermarks.rows).toEqual([{ n: '5' }])

    const read = await reader.readCounts(['1', '2', '4'], '12')
    expect(read.ok && Object.fromEntries(read.counts)).toEqual({
      '1': { likes: 2, favorites: 0, plays: 0, liked: false, favorited: false },
      '2': { likes: 1, favorites: 1, plays: 2, liked: false, favorited: true },
      '4': { likes: 0, favorites: 0, plays: 0, liked: false, favorited: false },
    })
    const rankings = createRankings({ ...layout, redis })
    expect(await rankings.top({ metric: 'likes', window: 'all', limit: 2 })).toEqual([
      { itemId: '1', score: 2 },
      { itemId: '2', score: 1 },
    ])

    // Redis loses its data: the rebuild reads the articles' tables back
    await flush.stop()
    flush = undefined
    await deleteByPrefix(redis, prefix)
    const rebuilt = await recovery.rebuild()
    expect(rebuilt.rebuilt && rebuilt.report).toMatchObject({ likeRows: 3, favoriteRows: 1, playItems: 1 })
    const after = await reader.readCounts(['1', '2'])
    expect(after.ok && Object.fromEntries(after.counts)).toEqual({
      '1': { likes: 2, favorites: 0, plays: 0 },
      '2': { likes: 1, favorites: 1, plays: 2 },
    })
    expect(await recovery.reconcile()).toEqual({ checked: 5, drifted: [], columnDrift: [] })
    expect(await recovery.restoreItem('2')).toEqual({ likes: 1, favorites: 1, plays: 2 })
    interactions.close()
    await recovery.stop()
  })
})
