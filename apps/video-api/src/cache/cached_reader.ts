import type { Cache, CallOptions } from 'floodgate'
import { isNotFound, notFound, OverloadedError } from 'floodgate'
import type { Cursor } from '../videos/cursor.js'
import type { Video } from '../videos/model.js'
import type { VideoPage, VideoReader, VideoReadOptions } from '../videos/reader.js'

/**
 * Longest wait (ms, ± a jitter of up to half) of a write's video lookup for another process's
 * load of the same row (the cache's Redis lock), where a read waits `lockWaitMs` (2 s by
 * default). 100: a healthy fill lands in a few ms; a fill Redis refused (CLUSTERDOWN on every
 * shard while a failed master's replica is promoted) leaves the lock held until its TTL, and each
 * write behind it answered after ~2 s instead of within INTERACTION_WAIT_TIMEOUT_MS (issue 29).
 * After it the write reads PostgreSQL itself (writes are not shed).
 */
export const WRITE_LOCK_WAIT_MS = 100

/** The cache's call options of a video lookup; `undefined` (the cache's own) for a plain read. */
function callOptions(write: boolean | undefined, permit: Promise<void> | undefined): CallOptions | undefined {
  if (write)
    return permit === undefined
      ? { lockWaitMs: WRITE_LOCK_WAIT_MS }
      : { lockWaitMs: WRITE_LOCK_WAIT_MS, permit }
  return permit === undefined ? undefined : { permit }
}

/**
 * {@link VideoReader} through floodgate's cache:
 * - `getById`: L1 → Bloom gate → L2 → database, "no such video" negatively
 *   cached; `getCachedById`: the L1 step alone, synchronous. The cached row
 *   carries visibility and status: routes decide what each caller may see
 *   after the cache (a private video is cached once and shown to its owner only).
 *   A write's lookup (`write: true`) waits for another's load only {@link WRITE_LOCK_WAIT_MS}.
 * - `recommend`: cached per limit with a fixed TTL; invalidated on every write.
 * - `listByAuthor`: not cached (cursor pages are many and cheap by index).
 */
export class CachedVideoReader implements VideoReader {
  /** Feed limits this process served, so a write can invalidate each one. */
  readonly feedLimits = new Set<number>()

  constructor(
    private readonly inner: VideoReader,
    private readonly videos: Cache<Video>,
    private readonly feed: Cache<Video[]>,
    private readonly feedTtlMs: number,
  ) {}

  async getById(id: string, options?: VideoReadOptions): Promise<Video | undefined> {
    try {
      // the cache waits for the permit before it loads (and answers), not before its Redis reads
      const write = options?.write
      return await this.videos.getOrLoad(
        id,
        async (key) => (await this.inner.getById(key, write ? { write } : undefined)) ?? notFound(),
        callOptions(write, options?.permit),
      )
    } catch (error) {
      // A write joined a read's load that the database guard shed: writes are not shed.
      if (options?.write && error instanceof OverloadedError) return this.inner.getById(id, options)
      throw error
    }
  }

  getCachedById(id: string): Video | null | undefined {
    const local = this.videos.getLocal(id)
    return isNotFound(local) ? null : local
  }

  listByAuthor(
    authorId: string,
    cursor: Cursor | undefined,
    limit: number,
    options?: { includeHidden?: boolean },
  ): Promise<VideoPage> {
    return this.inner.listByAuthor(authorId, cursor, limit, options)
  }

  async recommend(limit: number): Promise<Video[]> {
    this.feedLimits.add(limit)
    const items = await this.feed.getOrLoad(`recommend:${limit}`, () => this.inner.recommend(limit), {
      ttlMs: this.feedTtlMs,
    })
    return items ?? []
  }
}
