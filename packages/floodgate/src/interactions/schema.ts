import { type FlushTables, quoteFlushTables } from './tables.js'

/**
 * PostgreSQL DDL for the interaction tables, idempotent (`IF NOT EXISTS`), as
 * separate statements to run in order, inside one migration:
 *
 * - `video_likes(video_id, user_id, created_at, PK(video_id, user_id))`, `video_favorites` the same;
 * - `video_plays(event_id text PK, video_id, viewer, played_at)`, one row per counted play,
 *   keyed by `<videoId>:<streamId>`;
 * - `interaction_watermarks(kind, video_id, user_id, last_ms, last_seq, active)`: per
 *   (kind, video, user) the stream id (ms, seq, compared numerically) and absolute state of
 *   the last applied event, kept after an unlike too, so a late event never overwrites a newer one;
 * - `videos.like_count / favorite_count / play_count` (bigint, default 0), added if missing.
 *
 * The `videos` table itself must already exist with a bigint `id`.
 */
export function interactionSchemaSql(tables: Partial<FlushTables> = {}): string[] {
  const t = quoteFlushTables(tables)
  return [
    `CREATE TABLE IF NOT EXISTS ${t.likes} (
  video_id bigint NOT NULL,
  user_id bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (video_id, user_id)
)`,
    `CREATE INDEX IF NOT EXISTS "${t.bare.likes}_user_idx" ON ${t.likes} (user_id, created_at DESC, video_id)`,
    `CREATE TABLE IF NOT EXISTS ${t.favorites} (
  video_id bigint NOT NULL,
  user_id bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (video_id, user_id)
)`,
    `CREATE INDEX IF NOT EXISTS "${t.bare.favorites}_user_idx" ON ${t.favorites} (user_id, created_at DESC, video_id)`,
    `CREATE TABLE IF NOT EXISTS ${t.plays} (
  event_id text PRIMARY KEY,
  video_id bigint NOT NULL,
  viewer text NOT NULL,
  played_at timestamptz NOT NULL DEFAULT now()
)`,
    `CREATE INDEX IF NOT EXISTS "${t.bare.plays}_video_idx" ON ${t.plays} (video_id)`,
    `CREATE TABLE IF NOT EXISTS ${t.watermarks} (
  kind smallint NOT NULL,
  video_id bigint NOT NULL,
  user_id bigint NOT NULL,
  last_ms bigint NOT NULL,
  last_seq bigint NOT NULL,
  active boolean NOT NULL,
  PRIMARY KEY (kind, video_id, user_id)
)`,
    `ALTER TABLE ${t.videos}
  ADD COLUMN IF NOT EXISTS like_count bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS favorite_count bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS play_count bigint NOT NULL DEFAULT 0`,
  ]
}
