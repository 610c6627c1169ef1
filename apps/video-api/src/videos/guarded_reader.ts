import type { ConcurrencyGuard } from 'floodgate'
import type { Video } from './model.js'
import type { VideoPage, VideoReader, VideoReadOptions } from './reader.js'

/**
 * {@link VideoReader} behind the database guard: each read waits for a slot,
 * or is shed with floodgate's `OverloadedError` (503 `OVERLOADED`) without
 * reaching PostgreSQL. A write's own lookup (`{ write: true }`) is not guarded.
 */
export class GuardedVideoReader implements VideoReader {
  constructor(
    private readonly inner: VideoReader,
    private readonly guard: ConcurrencyGuard,
  ) {}

  getById(id: string, options?: VideoReadOptions): Promise<Video | undefined> {
    // a permit is waited for before a slot is taken: a refused request holds none
    const permit = options?.permit
    if (permit !== undefined) return permit.then(() => this.getById(id, { write: options?.write }))
    if (options?.write) return this.inner.getById(id, options)
    return this.guard.run(() => this.inner.getById(id))
  }

  listByAuthor(...args: Parameters<VideoReader['listByAuthor']>): Promise<VideoPage> {
    return this.guard.run(() => this.inner.listByAuthor(...args))
  }

  recommend(limit: number): Promise<Video[]> {
    return this.guard.run(() => this.inner.recommend(limit))
  }
}
