import type { LegacyCache } from './legacy_cache.js'

/** The shape of video-api's `VideoReader` the wrapper needs (kept structural: bench does not compile the app). */
export interface ReaderLike {
  getById(id: string): Promise<unknown>
  listByAuthor(authorId: string, cursor: unknown, limit: number, options?: unknown): Promise<unknown>
  recommend(limit: number): Promise<unknown[]>
}

/**
 * video-api's reader through the older design: `getById` as `video:<id>`
 * (the seed's `vistack:video:info:{id}`) and `recommend` as one fixed-TTL key;
 * `listByAuthor` uncached, as in the seed.
 */
export class LegacyVideoReader implements ReaderLike {
  constructor(
    private readonly inner: ReaderLike,
    private readonly cache: LegacyCache,
  ) {}

  getById(id: string): Promise<unknown> {
    return this.cache.get(`video:${id}`, () => this.inner.getById(id))
  }

  listByAuthor(authorId: string, cursor: unknown, limit: number, options?: unknown): Promise<unknown> {
    return this.inner.listByAuthor(authorId, cursor, limit, options)
  }

  async recommend(limit: number): Promise<unknown[]> {
    return (await this.cache.get(`recommend:${limit}`, () => this.inner.recommend(limit))) ?? []
  }
}
