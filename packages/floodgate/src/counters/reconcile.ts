import type { InteractionKeys } from '../interactions/keys.js'
import { countMembers, type MemberCount } from '../interactions/member_buckets.js'
import { liveItem, type QuotedTables } from '../interactions/tables.js'
import { SlotBatch } from '../rankings/slot_batch.js'
import type { RedisClient } from '../redis/index.js'
import type { SqlExecutor } from '../sql/executor.js'
import { guardSql } from './errors.js'

/** Three counts of one item. */
export interface CountTriple {
  likes: number
  favorites: number
  plays: number
}

/** One item whose Redis counts differ from the DB detail rows. */
export interface Drift {
  itemId: string
  /** Members of both kinds (the count served, or the members the buckets hold when that one agrees) and the play counter. */
  redis: CountTriple
  /** COUNT(*) of the detail rows (the truth). */
  db: CountTriple
}

/** One item whose denormalized count columns differ from its detail rows. */
export interface ColumnDrift {
  itemId: string
  columns: CountTriple
  db: CountTriple
}

/** Report of {@link reconcileCounts}. */
export interface ReconcileReport {
  /** Items compared. */
  checked: number
  /** Redis vs detail rows. Unflushed events show up here too: run on a drained stream, or re-check. */
  drifted: Drift[]
  /** The items' count columns vs detail rows (should always be empty). */
  columnDrift: ColumnDrift[]
}

/** Inputs of {@link reconcileCounts}. */
export interface ReconcileInput {
  redis: RedisClient
  sql: SqlExecutor
  keys: InteractionKeys
  tables: QuotedTables
  /** Items per keyset page (one SQL query and one Redis pipeline each). */
  chunkSize: number
  /** Stop after this many items (a sample of the lowest ids); all when absent. */
  maxItems?: number
  /** Report at most this many drifts of each kind. */
  maxReported: number
}

interface Row {
  id: string
  like_count: string
  favorite_count: string
  play_count: string
  like_rows: string
  favorite_rows: string
  play_rows: string
}

/**
 * Compares, item by item (keyset pages over the items table), the Redis counts
 * (both memberships through {@link countMembers}: the count served and the members the buckets
 * hold; the play counter) with COUNT(*) of the detail rows,
 * and the items' count columns with the same COUNT(*).
 * Read-only on both sides.
 * @throws {CountersDatabaseError} when a query fails. @throws {StoreUnavailableError} when Redis fails.
 */
export async function reconcileCounts(input: ReconcileInput): Promise<ReconcileReport> {
  const { tables } = input
  const c = tables.itemIdColumn
  const { table, id, likeCount, favoriteCount, playCount } = tables.items
  const text = `SELECT v.${id}::text AS id, v.${likeCount}::text AS like_count,
      v.${favoriteCount}::text AS favorite_count, v.${playCount}::text AS play_count,
      (SELECT count(*) FROM ${tables.likes} l WHERE l.${c} = v.${id})::text AS like_rows,
      (SELECT count(*) FROM ${tables.favorites} f WHERE f.${c} = v.${id})::text AS favorite_rows,
      (SELECT count(*) FROM ${tables.plays} p WHERE p.${c} = v.${id})::text AS play_rows
    FROM ${table} v WHERE v.${id} > $1::bigint${liveItem(tables, 'v')} ORDER BY v.${id} LIMIT $2`
  const report: ReconcileReport = { checked: 0, drifted: [], columnDrift: [] }
  let after = '0'
  for (;;) {
    const room =
      input.maxItems === undefined
        ? input.chunkSize
        : Math.min(input.chunkSize, input.maxItems - report.checked)
    if (room <= 0) return report
    const { rows } = await guardSql('reconcile read', () => input.sql.query<Row>(text, [after, room]))
    if (rows.length === 0) return report
    const ids = rows.map((row) => row.id)
    const batch = new SlotBatch(input.redis)
    for (const id of ids) {
      const plays = input.keys.plays(id)
      batch.add(plays, (p) => p.get(plays))
    }
    const [likes, favorites, plays] = await Promise.all([
      countMembers(input.redis, input.keys, 'likes', ids),
      countMembers(input.redis, input.keys, 'favorites', ids),
      batch.exec('reconcile read'),
    ])
    rows.forEach((row, i) => {
      const db = {
        likes: Number(row.like_rows),
        favorites: Number(row.favorite_rows),
        plays: Number(row.play_rows),
      }
      const redis = {
        likes: redisCount(likes[i]!, db.likes),
        favorites: redisCount(favorites[i]!, db.favorites),
        plays: Number(plays[i] ?? 0),
      }
      const columns = {
        likes: Number(row.like_count),
        favorites: Number(row.favorite_count),
        plays: Number(row.play_count),
      }
      if (!same(redis, db) && report.drifted.length < input.maxReported)
        report.drifted.push({ itemId: row.id, redis, db })
      if (!same(columns, db) && report.columnDrift.length < input.maxReported)
        report.columnDrift.push({ itemId: row.id, columns, db })
    })
    report.checked += rows.length
    after = rows[rows.length - 1]!.id
    if (rows.length < room) return report
  }
}

/** The count served, or, when that one agrees with the DB, the members held (a lost or extra member shows too). */
function redisCount(c: MemberCount, db: number): number {
  return c.counted !== db ? c.counted : c.held
}

function same(a: CountTriple, b: CountTriple): boolean {
  return a.likes === b.likes && a.favorites === b.favorites && a.plays === b.plays
}
