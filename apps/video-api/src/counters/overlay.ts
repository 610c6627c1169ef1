import type { CountsReader, CountsUnavailableReason, SqlExecutor } from 'floodgate'

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
  /** Present (true) when the counts come from the PostgreSQL columns because Redis could not answer. */
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
 * Live counts for a page of videos: from Redis in one pipelined round trip
 * (SCARD, SCARD, GET, and SISMEMBER ×2 for the caller); if Redis cannot
 * answer (error, timeout, epoch missing, rebuilding), from the PostgreSQL
 * count columns in one query, marked `countsStale: true`. Returns new objects;
 * the inputs (possibly shared cache entries) are not touched.
 */
export async function withCounts<V extends CountedVideo>(
  reader: CountsReader,
  sql: SqlExecutor,
  videos: readonly V[],
  viewerId: string | undefined,
  onStale?: (reason: CountsUnavailableReason) => void,
): Promise<V[]> {
  if (videos.length === 0) return []
  const ids = [...new Set(videos.map((v) => v.id))]
  const read = await reader.readCounts(ids, viewerId)
  if (read.ok) {
    return videos.map((v) => {
      const c = read.counts.get(v.id)
      if (!c) return v
      const out: V = { ...v, likeCount: c.likes, favoriteCount: c.favorites, playCount: c.plays }
      if (viewerId !== undefined) {
        out.liked = c.liked === true
        out.favorited = c.favorited === true
      }
      return out
    })
  }
  onStale?.(read.reason)
  const fromDb = await dbCounts(sql, ids, viewerId)
  return videos.map((v) => {
    const c = fromDb?.get(v.id)
    const out: V = { ...v, countsStale: true }
    if (c) {
      out.likeCount = c.likes
      out.favoriteCount = c.favorites
      out.playCount = c.plays
      if (viewerId !== undefined) {
        out.liked = c.liked === true
        out.favorited = c.favorited === true
      }
    }
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
