import type { CountsUnavailableReason, LiveCounts, SqlExecutor } from 'floodgate'

/** The count fields a video payload carries, plus what the overlay adds. */
export interface CountedVideo {
  id: string
  authorId: string
  likeCount: number
  favoriteCount: number
  playCount: number
  /** The caller likes it (authenticated requests only). */
  liked?: boolean
  /** The caller favourited it (authenticated requests only). */
  favorited?: boolean
  /** Present (true) when the counts did not come from Redis within the freshness bound (Redis could not answer). */
  countsStale?: true
}

interface DbCounts {
  id: string
  like_count: string | number
  favorite_count: string | number
  play_count: string | number
  liked: boolean | null
  favorited: boolean | null
}

/**
 * Live counts for a page of videos from the in-process layer ({@link LiveCounts}: counts at most
 * its `maxAgeMs` old, one batched Redis read per video at a time, the caller's flags from Redis).
 * Where the counts did not come from Redis within that bound (Redis could not answer: the last
 * Redis counts, or the PostgreSQL columns through {@link dbCounts}), the video is marked
 * `countsStale: true`. Returns new objects; the inputs (possibly shared cache entries) are not touched.
 */
export async function withCounts<V extends CountedVideo>(
  live: LiveCounts,
  videos: readonly V[],
  viewerId: string | undefined,
  onStale?: (reason: CountsUnavailableReason) => void,
): Promise<V[]> {
  if (videos.length === 0) return []
  const read = await live.read(
    videos.map((v) => v.id),
    viewerId,
  )
  if (read.unavailable) onStale?.(read.unavailable)
  return videos.map((v) => {
    const c = read.counts.get(v.id)
    // nobody could answer (Redis and the database failed): the payload's own columns, stale
    if (!c) return { ...v, countsStale: true }
    const out: V = { ...v, likeCount: c.likes, favoriteCount: c.favorites, playCount: c.plays }
    if (viewerId !== undefined && c.liked !== undefined) {
      out.liked = c.liked
      out.favorited = c.favorited === true
    }
    if (c.stale) out.countsStale = true
    return out
  })
}

/** Counts of one video from PostgreSQL, with the caller's flags when a viewer is given. */
export interface DbVideoCounts {
  likes: number
  favorites: number
  plays: number
  liked?: boolean
  favorited?: boolean
}

/**
 * The fallback: the `videos` count columns (kept by the flush in the same
 * transaction as the detail rows) and the caller's flags from the detail
 * tables, in one query. `undefined` when the database fails too.
 */
export async function dbCounts(
  sql: SqlExecutor,
  ids: readonly string[],
  viewerId: string | undefined,
): Promise<Map<string, DbVideoCounts> | undefined> {
  let rows: DbCounts[]
  try {
    rows = (
      await sql.query<DbCounts>(
        `SELECT v.id::text AS id, v.like_count, v.favorite_count, v.play_count,
           CASE WHEN $2::bigint IS NULL THEN NULL ELSE EXISTS (
             SELECT 1 FROM video_likes l WHERE l.video_id = v.id AND l.user_id = $2::bigint) END AS liked,
           CASE WHEN $2::bigint IS NULL THEN NULL ELSE EXISTS (
             SELECT 1 FROM video_favorites f WHERE f.video_id = v.id AND f.user_id = $2::bigint) END AS favorited
         FROM videos v WHERE v.id = ANY($1::bigint[])`,
        [ids, viewerId ?? null],
      )
    ).rows
  } catch {
    return undefined
  }
  return new Map(
    rows.map((r) => {
      const c: DbVideoCounts = {
        likes: Number(r.like_count),
        favorites: Number(r.favorite_count),
        plays: Number(r.play_count),
      }
      if (viewerId !== undefined) {
        c.liked = r.liked === true
        c.favorited = r.favorited === true
      }
      return [r.id, c]
    }),
  )
}

/** A video payload (the API's Video shape), as the overlay recognizes it. */
export function isVideoPayload(value: unknown): value is CountedVideo {
  if (typeof value !== 'object' || value === null) return false
  const v = value as Record<string, unknown>
  return (
    typeof v.id === 'string' &&
    typeof v.authorId === 'string' &&
    typeof v.likeCount === 'number' &&
    typeof v.favoriteCount === 'number' &&
    typeof v.playCount === 'number'
  )
}
