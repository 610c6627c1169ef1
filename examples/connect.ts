import { once } from 'node:events'
import { floodgateRedisOptions } from 'floodgate/redis'
import { Redis } from 'ioredis'

/**
 * The app's own ioredis client for `REDIS_URL` (default `redis://127.0.0.1:6379`) with the options
 * floodgate needs, resolved once ready: the offline queue is off, so an earlier command fails.
 */
export async function connect(): Promise<Redis> {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', floodgateRedisOptions())
  if (redis.status !== 'ready') await once(redis, 'ready')
  return redis
}

/** A key prefix of its own per run, so examples never touch other data. */
export const prefix = `floodgate-example:${process.pid}:${Date.now()}`

/** Deletes every key under {@link prefix}. */
export async function cleanUp(redis: Redis): Promise<void> {
  const keys = await redis.keys(`${prefix}:*`)
  if (keys.length > 0) await redis.del(...keys)
}
