import type { LegacyCache } from './legacy_cache.js'

/** The shape of video-api's `VideoReader` the wrapper needs (kept structural: bench does not compile the app). */
export interface ReaderLike {
  getById(id: string, options?: { permit?: Promise<void> }): Promise<unknown>
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

  /** `permit` (the request's rate-limit decision in flight) comes first: the older design does not overlap it. */
  getById(id: string, options?: { permit?: Promise<void> }): Promise<unknown> {
    const permit = options?.permit
    if (permit !== undefined) return permit.then(() => this.getById(id))
    return this.cache.get(`video:${id}`, () => this.inner.getById(id))
  }

  listByAuthor(authorId: string, cursor: unknown, limit: number, options?: unknown): Promise<unknown> {
    return this.inner.listByAuthor(authorId, cursor, limit, options)
  }

  async recommend(limit: number): Promise<unknown[]> {
    return (await this.cache.get(`recommend:${limit}`, () => this.inner.recommend(limit))) ?? []
  }
}
