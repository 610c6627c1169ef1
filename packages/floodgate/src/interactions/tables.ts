import { InvalidArgumentError } from '../errors/index.js'

/** Table names the flush writes (optionally schema-qualified, `schema.table`). */
export interface FlushTables {
  /** @default 'videos' (must have a bigint `id` and gets like_count, favorite_count, play_count) */
  videos: string
  /** @default 'video_likes' */
  likes: string
  /** @default 'video_favorites' */
  favorites: string
  /** @default 'video_plays' */
  plays: string
  /** @default 'interaction_watermarks' */
  watermarks: string
}

export const defaultFlushTables: FlushTables = {
  videos: 'videos',
  likes: 'video_likes',
  favorites: 'video_favorites',
  plays: 'video_plays',
  watermarks: 'interaction_watermarks',
}

/** Quoted identifiers for SQL text, plus a bare name usable inside index names. */
export type QuotedFlushTables = Record<keyof FlushTables, string> & {
  bare: Record<keyof FlushTables, string>
}

/** @throws {InvalidArgumentError} when a name is not `[schema.]identifier` of letters, digits and `_`. */
export function quoteFlushTables(tables: Partial<FlushTables> = {}): QuotedFlushTables {
  const all = { ...defaultFlushTables, ...tables }
  const quoted = {} as Record<keyof FlushTables, string>
  const bare = {} as Record<keyof FlushTables, string>
  for (const key of Object.keys(all) as (keyof FlushTables)[]) {
    const name = all[key]
    if (!/^([A-Za-z_][A-Za-z0-9_]*\.)?[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new InvalidArgumentError(
        `tables.${key}`,
        `must be [schema.]identifier, got ${JSON.stringify(name)}`,
      )
    }
    quoted[key] = name
      .split('.')
      .map((part) => `"${part}"`)
      .join('.')
    bare[key] = name.split('.').pop()!
  }
  return { ...quoted, bare }
}
