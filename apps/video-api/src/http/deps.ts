import type { ConcurrencyGuard, Interactions, KeySpace, RedisClient } from 'floodgate'
import type { Kysely } from 'kysely'
import type { TokenService } from '../auth/tokens.js'
import type { Database } from '../db/types.js'
import type { UserRepository } from '../users/repository.js'
import type { VideoReader } from '../videos/reader.js'
import type { VideoWriter } from '../videos/writer.js'

/** What the routes need; built once in `buildApp`. */
export interface RouteDeps {
  db: Kysely<Database>
  redis: RedisClient
  /** Redis key builder under REDIS_PREFIX, for the cache, limiter and counter issues. */
  keys: KeySpace
  tokens: TokenService
  users: UserRepository
  videos: VideoReader
  videoWriter: VideoWriter
  /** The database guard: read-path PostgreSQL work outside `videos` runs through `dbGuard.run` (src/db/guard.ts). */
  dbGuard: ConcurrencyGuard
  /** Likes, favourites and plays: the Redis write path (floodgate interactions). */
  interactions: Interactions
}
