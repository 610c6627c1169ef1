import { InvalidArgumentError } from '../errors/index.js'

/**
 * Names of the PostgreSQL tables the counters read (optionally schema-qualified,
 * `schema.table`). Columns are fixed: `videos(id, like_count, favorite_count,
 * play_count)`, `video_likes(video_id, user_id)`, `video_favorites(video_id, user_id)`,
 * `video_plays(event_id, video_id)`.
 */
export interface InteractionTables {
  /** @default 'videos' */
  videos?: string
  /** @default 'video_likes' */
  likes?: string
  /** @default 'video_favorites' */
  favorites?: string
  /** @default 'video_plays' */
  plays?: string
}

/** Table names after validation, as quoted SQL identifiers. */
export interface QuotedTables {
  videos: string
  likes: string
  favorites: string
  plays: string
}

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * Validates and quotes the table names.
 * @throws {InvalidArgumentError} naming `tables.<name>` for anything but lower-case identifiers.
 */
export function quoteTables(tables: InteractionTables = {}): QuotedTables {
  const names = {
    videos: tables.videos ?? 'videos',
    likes: tables.likes ?? 'video_likes',
    favorites: tables.favorites ?? 'video_favorites',
    plays: tables.plays ?? 'video_plays',
  }
  const quote = (field: string, name: string) => {
    const parts = name.split('.')
    if (parts.length > 2 || !parts.every((p) => IDENT.test(p)))
      throw new InvalidArgumentError(
        `tables.${field}`,
        `must be a lower-case identifier or schema.table, got ${name}`,
      )
    return parts.map((p) => `"${p}"`).join('.')
  }
  return {
    videos: quote('videos', names.videos),
    likes: quote('likes', names.likes),
    favorites: quote('favorites', names.favorites),
    plays: quote('plays', names.plays),
  }
}
