import type { QuotedTables } from './tables.js'

/**
 * The staging table a batch is loaded into: a temporary table (session-local, no WAL), emptied at
 * every commit and rollback. `kind` 0 = play, 1 = like, 2 = favourite; plays leave the membership
 * columns NULL, memberships the play columns. `advanced`: set by the watermark statement.
 */
export const STAGE_TABLE = 'pg_temp.floodgate_interaction_stage'
const STAGE_COLUMNS = 'kind, item, user_id, ms, seq, active, at_ms, event_id, viewer'

/** Creates the staging table in this session (once per session; see `InteractionApplier`). */
export const STAGE_DDL = `CREATE TEMP TABLE IF NOT EXISTS floodgate_interaction_stage (
  kind smallint NOT NULL, item bigint NOT NULL, user_id bigint, ms bigint, seq bigint, active boolean,
  at_ms bigint NOT NULL, event_id text, viewer text, advanced boolean NOT NULL DEFAULT false
) ON COMMIT DELETE ROWS`

/** Loads the batch into the staging table: COPY text rows of `STAGE_COLUMNS`. */
export const STAGE_COPY = `COPY ${STAGE_TABLE} (${STAGE_COLUMNS}) FROM STDIN`

/**
 * Lock slots: item `i` maps to slot `i mod 256`. A multiple of every power-of-two partition count
 * up to 256, so consumers of different partitions never share a slot.
 */
export const LOCK_SLOTS = 256

/**
 * Takes the batch's lock slots ($1, distinct) in ascending order, as transaction-level advisory
 * locks, and returns the session's backend pid (which sessions already have the staging table).
 * Two batches that share an item share its slot, so the later one queues here, before it holds
 * any row lock: concurrent consumers cannot deadlock on watermark, detail or item rows, whatever
 * order their statements visit them in. Correctness does not rest on these locks (see
 * {@link watermarkStatement}); they only order the waits. Scoped by the items table and schema.
 */
export function lockSlotsStatement(t: QuotedTables): string {
  const scope = `floodgate:flush-slot:${t.items.table.replaceAll("'", "''")}:`
  return `SELECT pg_backend_pid() AS pid,
  count(pg_advisory_xact_lock(hashtextextended('${scope}' || current_schema(), s.slot))) AS locked
FROM (SELECT DISTINCT slot FROM unnest($1::bigint[]) AS slot ORDER BY slot) s`
}

/** Where the watermark statement reads the batch: the COPYed staging table, or array parameters. */
export type WatermarkSource = 'stage' | 'params'

/**
 * Statement 1: advance the per-(kind, item, user) watermarks where the event's stream id
 * (ms, seq) is greater than the stored one, and mark those events `advanced` in the staging
 * table. `ON CONFLICT DO UPDATE` waits for a concurrent batch holding the same watermark row and
 * compares with the row as that batch committed it; the row stays locked until commit. Events of
 * items missing from the items table are left out (their counts cannot exist).
 *
 * `params` (no COPY): $1…$7 memberships (kind, item, user, ms, seq, active, at_ms), $8…$11 plays
 * (event id, item, viewer, at_ms); the statement writes the staging table itself.
 * Returns one row: `advanced`.
 */
export function watermarkStatement(t: QuotedTables, source: WatermarkSource): string {
  const c = t.itemIdColumn
  const { table, id } = t.items
  const upsert = (
    from: string,
  ) => `INSERT INTO ${t.watermarks} AS w (kind, ${c}, user_id, last_ms, last_seq, active)
  SELECT s.kind, s.item, s.user_id, s.ms, s.seq, s.active FROM ${from} s
  WHERE s.kind <> 0 AND EXISTS (SELECT 1 FROM ${table} v WHERE v.${id} = s.item)
  ORDER BY s.kind, s.item, s.user_id
  ON CONFLICT (kind, ${c}, user_id) DO UPDATE
    SET last_ms = excluded.last_ms, last_seq = excluded.last_seq, active = excluded.active
    WHERE (excluded.last_ms, excluded.last_seq) > (w.last_ms, w.last_seq)
  RETURNING w.kind, w.${c} AS item, w.user_id`
  if (source === 'stage')
    return `WITH wm AS (
  ${upsert(STAGE_TABLE)}
), marked AS (
  UPDATE ${STAGE_TABLE} s SET advanced = true FROM wm
  WHERE s.kind = wm.kind AND s.item = wm.item AND s.user_id = wm.user_id
  RETURNING 1
)
SELECT count(*)::int AS advanced FROM marked`
  return `WITH m AS (
  SELECT * FROM unnest($1::smallint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::boolean[], $7::bigint[])
    AS e(kind, item, user_id, ms, seq, active, at_ms)
), wm AS (
  ${upsert('m')}
), staged AS (
  INSERT INTO ${STAGE_TABLE} (${STAGE_COLUMNS}, advanced)
  SELECT m.kind, m.item, m.user_id, m.ms, m.seq, m.active, m.at_ms, NULL, NULL, wm.item IS NOT NULL
  FROM m LEFT JOIN wm ON wm.kind = m.kind AND wm.item = m.item AND wm.user_id = m.user_id
  UNION ALL
  SELECT 0, p.item, NULL, NULL, NULL, NULL, p.at_ms, p.event_id, p.viewer, false
  FROM unnest($8::text[], $9::bigint[], $10::text[], $11::bigint[]) AS p(event_id, item, viewer, at_ms)
  RETURNING advanced
)
SELECT (count(*) FILTER (WHERE advanced))::int AS advanced FROM staged`
}

/**
 * Statement 2: make the detail rows match the advanced keys' absolute state, insert the play log
 * rows (keyed by event id, `ON CONFLICT DO NOTHING`), and move each item's count columns once, by
 * the rows actually inserted − deleted and the plays inserted. A separate statement on purpose:
 * under READ COMMITTED it takes a fresh snapshot after statement 1 got its watermark row locks,
 * so it sees the detail rows a concurrent batch committed for the same keys meanwhile (a sibling
 * CTE of statement 1 would use the older snapshot, and its DELETE would miss such a row).
 * Returns one row of counts.
 */
export function mergeStatement(t: QuotedTables): string {
  const c = t.itemIdColumn
  const { table, id, likeCount, favoriteCount, playCount } = t.items
  const detail = (name: string, kind: number, target: string) => `ins_${name} AS (
  INSERT INTO ${target} (${c}, user_id, created_at)
  SELECT item, user_id, to_timestamp(at_ms::float8 / 1000) FROM a WHERE kind = ${kind} AND active
  ON CONFLICT DO NOTHING RETURNING ${c} AS item
), del_${name} AS (
  DELETE FROM ${target} d USING a
  WHERE a.kind = ${kind} AND NOT a.active AND d.${c} = a.item AND d.user_id = a.user_id
  RETURNING d.${c} AS item
)`
  return `WITH a AS (
  SELECT kind, item, user_id, active, at_ms FROM ${STAGE_TABLE} WHERE advanced
), ${detail('l', 1, t.likes)}, ${detail('f', 2, t.favorites)}, ins_p AS (
  INSERT INTO ${t.plays} (event_id, ${c}, viewer, played_at)
  SELECT s.event_id, s.item, s.viewer, to_timestamp(s.at_ms::float8 / 1000) FROM ${STAGE_TABLE} s
  WHERE s.kind = 0 AND EXISTS (SELECT 1 FROM ${table} v WHERE v.${id} = s.item)
  ON CONFLICT (event_id) DO NOTHING RETURNING ${c} AS item
), delta AS (
  SELECT item, sum(l)::bigint AS l, sum(f)::bigint AS f, sum(n)::bigint AS n FROM (
    SELECT item, 1 AS l, 0 AS f, 0 AS n FROM ins_l
    UNION ALL SELECT item, -1, 0, 0 FROM del_l
    UNION ALL SELECT item, 0, 1, 0 FROM ins_f
    UNION ALL SELECT item, 0, -1, 0 FROM del_f
    UNION ALL SELECT item, 0, 0, 1 FROM ins_p
  ) changes GROUP BY item
), upd AS (
  UPDATE ${table} v SET ${likeCount} = v.${likeCount} + delta.l,
    ${favoriteCount} = v.${favoriteCount} + delta.f, ${playCount} = v.${playCount} + delta.n
  FROM delta WHERE v.${id} = delta.item AND (delta.l <> 0 OR delta.f <> 0 OR delta.n <> 0)
  RETURNING 1
)
SELECT (SELECT count(*) FROM ins_l)::int AS likes_added, (SELECT count(*) FROM del_l)::int AS likes_removed,
  (SELECT count(*) FROM ins_f)::int AS favorites_added, (SELECT count(*) FROM del_f)::int AS favorites_removed,
  (SELECT count(*) FROM ins_p)::int AS plays_added, (SELECT count(*) FROM upd)::int AS items_updated`
}
