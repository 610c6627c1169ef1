import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/types.js'
import { type Cursor, cutPage } from './cursor.js'
import { toVideo, type Video } from './model.js'

export interface VideoPage {
  items: Video[]
  nextCursor: string | null
}

/** Options of {@link VideoReader.getById}. */
export interface VideoReadOptions {
  /** The lookup of a write (ownership, visibility): never shed by the database guard. @default false */
  write?: boolean
  /**
   * The request's rate-limit decision in flight (`request.rateLimitPermit`): a reader may read
   * its cache at once, but queries PostgreSQL and answers only once it resolves, and rejects with
   * its reason when it rejects. @default none
   */
  permit?: Promise<void>
}

/**
 * Reads of videos. This is the seam the cache wraps: a cached reader
 * implements the same interface around this one.
 */
export interface VideoReader {
  /** A live (not deleted) video of any visibility, or `undefined`. Visibility is the caller's check. */
  getById(id: string, options?: VideoReadOptions): Promise<Video | undefined>
  /**
   * What {@link getById} would give now if this process holds it in memory (a cache's L1),
   * synchronously: the video, `null` for a cached "no such video", `undefined` when only
   * `getById` can tell. Absent on readers that keep nothing in memory.
   */
  getCachedById?(id: string): Video | null | undefined
  /**
   * Live videos of `authorId`, newest first (created_at desc, id desc), after `cursor`.
   * `includeHidden` = also drafts and private ones (the owner's view).
   */
  listByAuthor(
    authorId: string,
    cursor: Cursor | undefined,
    limit: number,
    options?: { includeHidden?: boolean },
  ): Promise<VideoPage>
  /** The latest `limit` published public live videos. */
  recommend(limit: number): Promise<Video[]>
}

const columns = [
  'id',
  'author_id',
  'title',
  'description',
  'cover_url',
  'play_url',
  'visibility',
  'status',
  'like_count',
  'favorite_count',
  'play_count',
  'created_at',
  'updated_at',
  'deleted_at',
] as const

/** {@link VideoReader} straight on PostgreSQL. */
export class SqlVideoReader implements VideoReader {
  constructor(private readonly db: Kysely<Database>) {}

  async getById(id: string, options?: VideoReadOptions): Promise<Video | undefined> {
    if (options?.permit !== undefined) await options.permit
    const row = await this.db
      .selectFrom('videos')
      .select(columns)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst()
    return row ? toVideo(row) : undefined
  }

  async listByAuthor(
    authorId: string,
    cursor: Cursor | undefined,
    limit: number,
    options: { includeHidden?: boolean } = {},
  ): Promise<VideoPage> {
    let query = this.db
      .selectFrom('videos')
      .select(columns)
      // Full microsecond precision for the cursor; a JS Date would round to ms and skip or repeat rows.
      .select(
        sql<string>`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`.as(
          'created_at_text',
        ),
      )
      .where('author_id', '=', authorId)
      .where('deleted_at', 'is', null)
    if (!options.includeHidden)
      query = query.where('status', '=', 'published').where('visibility', '=', 'public')
    if (cursor) {
      query = query.where(
        sql<boolean>`(created_at, id) < (${cursor.createdAt}::timestamptz, ${cursor.id}::bigint)`,
      )
    }
    const rows = await query
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute()
    const page = cutPage(rows, limit, (row) => ({ createdAt: row.created_at_text, id: String(row.id) }))
    return { items: page.rows.map(toVideo), nextCursor: page.nextCursor }
  }

  async recommend(limit: number): Promise<Video[]> {
    const rows = await this.db
      .selectFrom('videos')
      .select(columns)
      .where('deleted_at', 'is', null)
      .where('status', '=', 'published')
      .where('visibility', '=', 'public')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute()
    return rows.map(toVideo)
  }
}
