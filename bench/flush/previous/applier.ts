/**
 * The applier as it was before the COPY + single-merge applier (floodgate 0.1.0, commit 1fcd423),
 * kept verbatim for bench/flush's side-by-side "previous" rows. Not part of the library.
 */
import type {
  ApplyResult,
  InteractionTablesOptions,
  MembershipEvent,
  PlayEvent,
  SqlExecutor,
} from 'floodgate'
import {
  type QuotedTables,
  quoteTables,
  resolveTables,
} from '../../../packages/floodgate/src/interactions/tables.js'

const KIND = { like: 1, favorite: 2 } as const

/**
 * Applies one batch in one transaction, order-safe and idempotent:
 * 1. upsert `interaction_watermarks` only where the event's stream id (ms, seq) is greater than
 *    the stored one — a late (claimed) event older than what was applied changes nothing;
 * 2. for the keys whose watermark advanced, insert or delete the detail row to match the
 *    absolute state (`ON CONFLICT DO NOTHING`, `DELETE … USING`), with `RETURNING`;
 * 3. change the items' count columns by the rows actually inserted minus deleted;
 * 4. insert play log rows keyed by event id (`ON CONFLICT DO NOTHING RETURNING`) and add the
 *    inserted rows to `play_count`.
 * Events for items missing from the items table are skipped (their counts cannot exist).
 * Set-based: arrays passed through `unnest`, at most four statements per batch whatever its size
 * (the first locks the batch's item rows in id order, so concurrent consumers cannot deadlock).
 */
export class PreviousInteractionApplier {
  private readonly lockItemsSql: string
  private readonly watermarkSql: string
  private readonly detailSql: string
  private readonly playSql: string

  /** @throws {InvalidArgumentError} on an invalid table or column name. */
  constructor(tables: InteractionTablesOptions = {}) {
    const t = quoteTables(resolveTables(tables))
    this.lockItemsSql = lockItemsStatement(t)
    this.watermarkSql = watermarkStatement(t)
    this.detailSql = detailStatement(t)
    this.playSql = playStatement(t)
  }

  /** Applies already-netted events inside a transaction the caller owns. */
  async applyNetted(
    tx: SqlExecutor,
    memberships: readonly MembershipEvent[],
    plays: readonly PlayEvent[],
  ): Promise<ApplyResult> {
    const result: ApplyResult = {
      likesAdded: 0,
      likesRemoved: 0,
      favoritesAdded: 0,
      favoritesRemoved: 0,
      playsAdded: 0,
      advanced: 0,
    }
    if (memberships.length === 0 && plays.length === 0) return result
    // Lock order: every batch first locks the item rows it will touch, in id order, so two
    // consumers meet on their first common item and queue there instead of deadlocking
    // (watermark, detail and count updates all key on the item).
    const itemIds = [...new Set([...memberships.map((e) => e.itemId), ...plays.map((e) => e.itemId)])].sort(
      compareIds,
    )
    await tx.query(this.lockItemsSql, [itemIds])
    if (memberships.length > 0) {
      const sorted = [...memberships].sort(byKey)
      const advanced = await tx.query<{ kind: number; item_id: string; user_id: string; active: boolean }>(
        this.watermarkSql,
        [
          sorted.map((e) => KIND[e.kind]),
          sorted.map((e) => e.itemId),
          sorted.map((e) => e.userId),
          sorted.map((e) => e.ms),
          sorted.map((e) => e.seq),
          sorted.map((e) => e.active),
        ],
      )
      result.advanced = advanced.rows.length
      if (advanced.rows.length > 0) {
        const atMs = new Map(sorted.map((e) => [`${KIND[e.kind]}:${e.itemId}:${e.userId}`, e.atMs]))
        const a = advanced.rows
        const { rows } = await tx.query<Record<string, string | number>>(this.detailSql, [
          a.map((r) => r.kind),
          a.map((r) => r.item_id),
          a.map((r) => r.user_id),
          a.map((r) => r.active),
          a.map((r) => atMs.get(`${r.kind}:${r.item_id}:${r.user_id}`)),
        ])
        const row = rows[0] ?? {}
        result.likesAdded = Number(row.likes_added ?? 0)
        result.likesRemoved = Number(row.likes_removed ?? 0)
        result.favoritesAdded = Number(row.favorites_added ?? 0)
        result.favoritesRemoved = Number(row.favorites_removed ?? 0)
      }
    }
    if (plays.length > 0) {
      const sorted = [...plays].sort((a, b) => compareIds(a.itemId, b.itemId))
      const { rows } = await tx.query<Record<string, string | number>>(this.playSql, [
        sorted.map((e) => e.eventId),
        sorted.map((e) => e.itemId),
        sorted.map((e) => e.viewer),
        sorted.map((e) => e.atMs),
      ])
      result.playsAdded = Number(rows[0]?.plays_added ?? 0)
    }
    return result
  }
}

function byKey(a: MembershipEvent, b: MembershipEvent): number {
  return KIND[a.kind] - KIND[b.kind] || compareIds(a.itemId, b.itemId) || compareIds(a.userId, b.userId)
}

function compareIds(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)
}

/** Statement 0: row-lock the batch's items in id order (`FOR NO KEY UPDATE`: foreign-key checks of concurrent inserts still pass). */
function lockItemsStatement(t: QuotedTables): string {
  const { table, id } = t.items
  return `SELECT v.${id} FROM ${table} v WHERE v.${id} = ANY($1::bigint[]) ORDER BY v.${id} FOR NO KEY UPDATE`
}

/**
 * Statement 1: advance the watermarks. It row-locks every key it advances until commit, so a
 * concurrent batch touching the same (kind, item, user) waits here for the other to commit.
 */
function watermarkStatement(t: QuotedTables): string {
  const c = t.itemIdColumn
  const { table, id } = t.items
  return `INSERT INTO ${t.watermarks} AS w (kind, ${c}, user_id, last_ms, last_seq, active)
SELECT e.kind, e.item_id, e.user_id, e.last_ms, e.last_seq, e.active
FROM unnest($1::smallint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[])
  AS e(kind, item_id, user_id, last_ms, last_seq, active)
WHERE EXISTS (SELECT 1 FROM ${table} v WHERE v.${id} = e.item_id)
ORDER BY e.kind, e.item_id, e.user_id
ON CONFLICT (kind, ${c}, user_id) DO UPDATE
  SET last_ms = excluded.last_ms, last_seq = excluded.last_seq, active = excluded.active
  WHERE (excluded.last_ms, excluded.last_seq) > (w.last_ms, w.last_seq)
RETURNING w.kind, w.${c}::text AS item_id, w.user_id::text AS user_id, w.active`
}

/**
 * Statement 2: make the detail rows match the advanced keys' absolute state and move the count
 * columns by the rows actually inserted or deleted. It is a separate statement on purpose: under
 * READ COMMITTED it takes a fresh snapshot after statement 1 got its locks, so it sees the detail
 * rows a concurrent batch committed for the same keys (a sibling CTE of statement 1 would use the
 * older snapshot, and its DELETE would miss a row inserted meanwhile).
 */
function detailStatement(t: QuotedTables): string {
  const c = t.itemIdColumn
  const { table, id, likeCount, favoriteCount } = t.items
  return `WITH adv(kind, item_id, user_id, active, at_ms) AS (
  SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bigint[], $4::boolean[], $5::bigint[])
), ins_l AS (
  INSERT INTO ${t.likes} (${c}, user_id, created_at)
  SELECT item_id, user_id, to_timestamp(at_ms / 1000.0) FROM adv WHERE kind = 1 AND active
  ON CONFLICT DO NOTHING RETURNING ${c} AS item_id
), del_l AS (
  DELETE FROM ${t.likes} d USING adv
  WHERE adv.kind = 1 AND NOT adv.active AND d.${c} = adv.item_id AND d.user_id = adv.user_id
  RETURNING d.${c} AS item_id
), ins_f AS (
  INSERT INTO ${t.favorites} (${c}, user_id, created_at)
  SELECT item_id, user_id, to_timestamp(at_ms / 1000.0) FROM adv WHERE kind = 2 AND active
  ON CONFLICT DO NOTHING RETURNING ${c} AS item_id
), del_f AS (
  DELETE FROM ${t.favorites} d USING adv
  WHERE adv.kind = 2 AND NOT adv.active AND d.${c} = adv.item_id AND d.user_id = adv.user_id
  RETURNING d.${c} AS item_id
), delta AS (
  SELECT item_id, sum(l)::bigint AS l, sum(f)::bigint AS f FROM (
    SELECT item_id, 1 AS l, 0 AS f FROM ins_l
    UNION ALL SELECT item_id, -1, 0 FROM del_l
    UNION ALL SELECT item_id, 0, 1 FROM ins_f
    UNION ALL SELECT item_id, 0, -1 FROM del_f
  ) changes GROUP BY item_id
), upd AS (
  UPDATE ${table} v SET ${likeCount} = v.${likeCount} + delta.l, ${favoriteCount} = v.${favoriteCount} + delta.f
  FROM delta WHERE v.${id} = delta.item_id AND (delta.l <> 0 OR delta.f <> 0)
  RETURNING v.${id}
)
SELECT (SELECT count(*) FROM ins_l) AS likes_added, (SELECT count(*) FROM del_l) AS likes_removed,
  (SELECT count(*) FROM ins_f) AS favorites_added, (SELECT count(*) FROM del_f) AS favorites_removed,
  (SELECT count(*) FROM upd) AS items_updated`
}

function playStatement(t: QuotedTables): string {
  const c = t.itemIdColumn
  const { table, id, playCount } = t.items
  return `WITH ins AS (
  INSERT INTO ${t.plays} (event_id, ${c}, viewer, played_at)
  SELECT e.event_id, e.item_id, e.viewer, to_timestamp(e.at_ms / 1000.0)
  FROM unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[]) AS e(event_id, item_id, viewer, at_ms)
  WHERE EXISTS (SELECT 1 FROM ${table} v WHERE v.${id} = e.item_id)
  ON CONFLICT (event_id) DO NOTHING
  RETURNING ${c} AS item_id
), delta AS (
  SELECT item_id, count(*) AS n FROM ins GROUP BY item_id
), upd AS (
  UPDATE ${table} v SET ${playCount} = v.${playCount} + delta.n FROM delta WHERE v.${id} = delta.item_id
  RETURNING v.${id}
)
SELECT (SELECT count(*) FROM ins) AS plays_added, (SELECT count(*) FROM upd) AS items_updated`
}
