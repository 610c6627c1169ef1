import type { KeySpace, RedisClient } from 'floodgate'
import { VideoApiError } from '../errors/index.js'

/**
 * REDIS_PREFIX holds the keys of another database's installation. `code`:
 * `VIDEO_API_REDIS_PREFIX_OWNED`. Serving on would show that installation's counts, likes and
 * rankings on this catalog's ids (both number videos from 1).
 */
export class RedisPrefixOwnedError extends VideoApiError {
  constructor(prefix: string, owner: string, installationId: string) {
    super(
      'VIDEO_API_REDIS_PREFIX_OWNED',
      `REDIS_PREFIX '${prefix}' on this Redis holds the data of installation ${owner}, and this database is installation ${installationId} (a new or reset database?): its counts, likes and rankings would show on this catalog's videos. Set another REDIS_PREFIX, or delete the old keys: redis-cli --scan --pattern '${prefix}:*' | xargs -r redis-cli unlink (docs/operations.md, "Starting over")`,
    )
  }
}

/** What {@link claimRedisPrefix} found. */
export type PrefixClaim = 'claimed' | 'ours' | { unchecked: Error }

/**
 * Marks the prefix's keys as this installation's (`<prefix>:meta:installation`, no TTL), in one
 * `SET … NX GET` (Redis ≥ 7.0), so that a service pointed at another database on the same Redis
 * and prefix refuses to start instead of serving the other catalog's Redis state. After a Redis
 * data loss the key is gone with the rest and the next start claims it again.
 * @returns `claimed` (the key was absent), `ours`, or `{ unchecked }` when Redis failed: the
 *   caller logs it and starts (Redis failing is not a reason to stay down).
 * @throws {RedisPrefixOwnedError} when another installation owns the prefix.
 */
export async function claimRedisPrefix(
  redis: RedisClient,
  keys: KeySpace,
  installationId: string,
): Promise<PrefixClaim> {
  let owner: string | null
  try {
    owner = await redis.set(keys.plain('meta', 'installation'), installationId, 'NX', 'GET')
  } catch (error) {
    return { unchecked: error as Error }
  }
  if (owner === null) return 'claimed'
  if (owner === installationId) return 'ours'
  throw new RedisPrefixOwnedError(keys.prefix, owner, installationId)
}
