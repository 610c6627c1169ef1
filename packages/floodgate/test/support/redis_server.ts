import { type PrivateRedis, until } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { floodgateRedisOptions } from '../../src/redis/index.js'

export { freePort, PrivateRedis } from '@floodgate/test-support'

/**
 * A client on `server` with floodgate's production options (errors ignored: tests kill the
 * server), resolved once it is ready. @throws {Error} when it is not ready within 5 s.
 */
export async function privateRedisClient(server: PrivateRedis, commandTimeoutMs = 5000): Promise<Redis> {
  const redis = new Redis(server.url, floodgateRedisOptions({ commandTimeoutMs }))
  redis.on('error', () => undefined)
  await until(() => redis.status === 'ready', { everyMs: 50, what: `client on port ${server.port} ready` })
  return redis
}
