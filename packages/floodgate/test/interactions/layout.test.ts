import { afterAll, describe, expect, it } from 'vitest'
import {
  CountsReader,
  CountsRecovery,
  createRankings,
  defaultInteractionTables,
  INTERACTION_DEFAULTS,
  InteractionKeys,
  Interactions,
  InvalidArgumentError,
  interactionLayout,
  interactionSchemaSql,
  pgPoolDatabase,
} from '../../src/index.js'
import { schemaPool } from '../support/pg_schema.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('ix-layout')
// never queried: CountsRecovery's constructor only keeps it
const unusedPool = schemaPool('public', 1)

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
  await unusedPool.end()
})

describe('interactionLayout', () => {
  it('applies the defaults once, frozen', () => {
    const layout = interactionLayout({ prefix })
    expect(layout).toEqual({
      prefix,
      partitions: INTERACTION_DEFAULTS.partitions,
      topK: INTERACTION_DEFAULTS.topK,
      tables: defaultInteractionTables,
    })
    expect(Object.isFrozen(layout) && Object.isFrozen(layout.tables)).toBe(true)
    const clips = interactionLayout({ prefix, tables: { items: { table: 'app.clips' } } }).tables
    expect(clips.items).toEqual({ ...defaultInteractionTables.items, table: 'app.clips' })
    expect(Object.isFrozen(clips.items)).toBe(true)
  })

  it('defaults to names of no particular item; the DDL and its index names follow them', () => {
    expect(defaultInteractionTables).toEqual({
      items: {
        table: 'items',
        id: 'id',
        likeCount: 'like_count',
        favoriteCount: 'favorite_count',
        playCount: 'play_count',
      },
      itemIdColumn: 'item_id',
      likes: 'item_likes',
      favorites: 'item_favorites',
      plays: 'item_plays',
      watermarks: 'interaction_watermarks',
    })
    const ddl = interactionSchemaSql().join('\n')
    expect(ddl).not.toMatch(/video/)
    for (const index of ['"item_likes_user_idx"', '"item_favorites_user_idx"', '"item_plays_item_idx"'])
      expect(ddl).toContain(`CREATE INDEX IF NOT EXISTS ${index}`)
    expect(ddl).toContain('ALTER TABLE "items"')
  })

  it('refuses a bad field by name', () => {
    expect(() => interactionLayout({ prefix: '' })).toThrow(InvalidArgumentError)
    expect(() => interactionLayout({ prefix, partitions: 0 })).toThrow(/partitions/)
    expect(() => interactionLayout({ prefix, topK: 0 })).toThrow(/topK/)
    expect(() => interactionLayout({ prefix, tables: { likes: 'bad name' } })).toThrow(/tables\.likes/)
    expect(() => interactionLayout({ prefix, tables: { items: { id: 'a.id' } } })).toThrow(
      /tables\.items\.id/,
    )
    expect(() => interactionLayout({ prefix, tables: { itemIdColumn: 'Video_Id' } })).toThrow(
      /tables\.itemIdColumn/,
    )
  })

  it('every constructor taking the layout fields checks them the same way (topK in [1, 100000])', () => {
    const tooMany = { prefix, topK: 100_001 }
    expect(() => interactionLayout(tooMany)).toThrow(/topK: must be an integer in \[1, 100000\]/)
    expect(() => new Interactions(redis, tooMany)).toThrow(/topK: must be an integer in \[1, 100000\]/)
    expect(() => new CountsRecovery({ ...tooMany, redis, sql: pgPoolDatabase(unusedPool) })).toThrow(
      /topK: must be an integer in \[1, 100000\]/,
    )
    expect(() => createRankings({ ...tooMany, redis })).toThrow(/topK: must be an integer in \[1, 100000\]/)
    const badPartitions = { prefix, partitions: 0 }
    for (const build of [
      () => new Interactions(redis, badPartitions),
      () => new CountsReader({ ...badPartitions, redis }),
      () => createRankings({ ...badPartitions, redis }),
    ])
      expect(build).toThrow(/partitions: must be an integer in \[1, 16384\]/)
  })

  it('spread into the write path, the counts reader and the rankings, they agree (P = 3, top K = 2)', async () => {
    const layout = interactionLayout({ prefix, partitions: 3, topK: 2 })
    const interactions = new Interactions(redis, { ...layout })
    const reader = new CountsReader({ ...layout, redis, timeoutMs: 2000 })
    const rankings = createRankings({ ...layout, redis })
    await redis.set(new InteractionKeys(prefix, 3).epoch(), 'e1')
    // ids 1..5 over 3 partitions; video v gets v likes
    for (const video of ['1', '2', '3', '4', '5'])
      for (let user = 1; user <= Number(video); user++) await interactions.setLiked(video, String(user), true)

    const read = await reader.readCounts(['1', '4', '5'])
    expect(read.ok && [...read.counts.values()].map((c) => c.likes)).toEqual([1, 4, 5])
    // the rankings merge the write path's 3 partitions (4 and 1 in partition 1, 5 and 2 in partition 2)
    const top = await rankings.top({ metric: 'likes', window: 'all', limit: 2 })
    expect(top).toEqual([
      { itemId: '5', score: 5 },
      { itemId: '4', score: 4 },
    ])
    expect(rankings.topK).toBe(2)
    interactions.close()
  })
})
