import { type Kysely, sql } from 'kysely'
import type { Database } from '../db/types.js'
import { unauthorized } from '../http/api_error.js'
import { toVideo, type Video } from './model.js'

/** SQLSTATE foreign_key_violation (same code from pg and PGlite). */
const FOREIGN_KEY_VIOLATION = '23503'

export interface NewVideoInput {
  title: string
  description?: string | undefined
  coverUrl: string
  playUrl: string
  visibility?: 'public' | 'private' | undefined
  status?: 'draft' | 'published' | undefined
}

export type VideoPatch = Partial<NewVideoInput>

export type VideoChange = 'created' | 'updated' | 'deleted'

/**
 * Called after a committed write, with the video id and what happened:
 * where the cache will invalidate. A hook that throws is logged by the caller's
 * `onHookError` and does not undo the write.
 */
export type VideoChangedHook = (id: string, change: VideoChange, video: Video) => Promise<void> | void

/** Writes of videos, followed by the `onVideoChanged` hooks. */
export class VideoWriter {
  private readonly hooks: VideoChangedHook[] = []

  constructor(
    private readonly db: Kysely<Database>,
    private readonly onHookError: (error: unknown) => void = () => {},
  ) {}

  /** Registers a post-write hook (the cache's invalidation, later). */
  onVideoChanged(hook: VideoChangedHook): void {
    this.hooks.push(hook)
  }

  async create(authorId: string, input: NewVideoInput): Promise<Video> {
    const row = await this.db
      .insertInto('videos')
      .values({
        author_id: authorId,
        title: input.title,
        description: input.description ?? '',
        cover_url: input.coverUrl,
        play_url: input.playUrl,
        visibility: input.visibility ?? 'public',
        status: input.status ?? 'draft',
      })
      .returningAll()
      .executeTakeFirstOrThrow()
      .catch((error: unknown) => {
        // users(id) foreign key: a validly signed token whose user is gone (or never existed here).
        if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION)
          throw unauthorized('the user of this bearer token does not exist')
        throw error
      })
    return this.changed(toVideo(row), 'created')
  }

  /** Applies `patch` to a live video owned by `authorId`; `undefined` when there is no such video. */
  async update(id: string, authorId: string, patch: VideoPatch): Promise<Video | undefined> {
    const row = await this.db
      .updateTable('videos')
      .set({
        ...(patch.title === undefined ? {} : { title: patch.title }),
        ...(patch.description === undefined ? {} : { description: patch.description }),
        ...(patch.coverUrl === undefined ? {} : { cover_url: patch.coverUrl }),
        ...(patch.playUrl === undefined ? {} : { play_url: patch.playUrl }),
        ...(patch.visibility === undefined ? {} : { visibility: patch.visibility }),
        ...(patch.status === undefined ? {} : { status: patch.status }),
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('author_id', '=', authorId)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst()
    return row ? this.changed(toVideo(row), 'updated') : undefined
  }

  /** Soft-deletes a live video owned by `authorId`; false when there is no such video. */
  async softDelete(id: string, authorId: string): Promise<boolean> {
    const row = await this.db
      .updateTable('videos')
      .set({ deleted_at: sql`now()`, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('author_id', '=', authorId)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst()
    if (row) await this.changed(toVideo(row), 'deleted')
    return row !== undefined
  }

  private async changed(video: Video, change: VideoChange): Promise<Video> {
    for (const hook of this.hooks) {
      try {
        await hook(video.id, change, video)
      } catch (error) {
        this.onHookError(error)
      }
    }
    return video
  }
}
