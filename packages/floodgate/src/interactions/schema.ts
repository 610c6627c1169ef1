import { type InteractionTablesOptions, quoteTables, resolveTables } from './tables.js'

/**
 * PostgreSQL DDL for the interaction tables, idempotent (`IF NOT EXISTS`), as
 * separate statements to run in order, inside one migration. With the default
 * {@link InteractionTables}:
 *
 * - `item_likes(item_id, user_id, created_at, PK(item_id, user_id))`, `item_favorites` the same;
 * - `item_plays(event_id text PK, item_id, viewer, played_at)`, one row per counted play,
 *   keyed by `<itemId>:<streamId>`;
 * - `interaction_watermarks(kind, item_id, user_id, last_ms, last_seq, active)`: per
 *   (kind, item, user) the stream id (ms, seq, compared numerically) and absolute state of
 *   the last applied event, kept after an unlike too, so a late event never overwrites a newer one;
 * - `items.like_count / favorite_count / play_count` (bigint, default 0), added if missing.
 *
 * The items table itself must already exist with a bigint id column. Index names are made of the
 * bare table names and the item id column less its `_id` (`item_plays_item_idx`; video-api's
 * `video_plays_video_idx`).
 * @throws {InvalidArgumentError} for a bad name (see {@link resolveTables}).
 */
export function interactionSchemaSql(tables: InteractionTablesOptions = {}): string[] {
  const t = quoteTables(resolveTables(tables))
  const item = t.itemIdColumn
  const itemIndex = t.bare.itemIdColumn.replace(/_id$/, '')
  return [
    `CREATE TABLE IF NOT EXISTS ${t.likes} (
  ${item} bigint NOT NULL,
  user_id bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (${item}, user_id)
)`,
    `CREATE INDEX IF NOT EXISTS "${t.bare.likes}_user_idx" ON ${t.likes} (user_id, created_at DESC, ${item})`,
    `CREATE TABLE IF NOT EXISTS ${t.favorites} (
  ${item} bigint NOT NULL,
  user_id bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (${item}, user_id)
)`,
    `CREATE INDEX IF NOT EXISTS "${t.bare.favorites}_user_idx" ON ${t.favorites} (user_id, created_at DESC, ${item})`,
    `CREATE TABLE IF NOT EXISTS ${t.plays} (
  event_id text PRIMARY KEY,
  ${item} bigint NOT NULL,
  viewer text NOT NULL,
  played_at timestamptz NOT NULL DEFAULT now()
)`,
    `CREATE INDEX IF NOT EXISTS "${t.bare.plays}_${itemIndex}_idx" ON ${t.plays} (${item})`,
    `CREATE TABLE IF NOT EXISTS ${t.watermarks} (
  kind smallint NOT NULL,
  ${item} bigint NOT NULL,
  user_id bigint NOT NULL,
  last_ms bigint NOT NULL,
  last_seq bigint NOT NULL,
  active boolean NOT NULL,
  PRIMARY KEY (kind, ${item}, user_id)
)`,
    `ALTER TABLE ${t.items.table}
  ADD COLUMN IF NOT EXISTS ${t.items.likeCount} bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS ${t.items.favoriteCount} bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS ${t.items.playCount} bigint NOT NULL DEFAULT 0`,
  ]
}
