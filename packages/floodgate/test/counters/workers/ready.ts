import type { RedisClient } from '../../../src/index.js'

/** Waits until a client created with the offline queue off is connected (commands fail before). */
export async function whenReady(redis: RedisClient): Promise<void> {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve))
}
