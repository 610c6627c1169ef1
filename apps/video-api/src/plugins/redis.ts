import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ClientTracking, KeySpace, type RedisClient } from 'floodgate'
import { claimRedisPrefix } from '../redis/prefix_owner.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The request-path Redis client (the app does not close it). */
    redis: RedisClient
    /** Key builder under REDIS_PREFIX. */
    keys: KeySpace
    /**
     * The app's one Redis client-side caching pair (floodgate `ClientTracking`: a data and an
     * invalidation connection), opened on the first call and closed with the app. The video
     * cache's L1 and the live counts share it: one pair per instance, not one per user.
     */
    clientTracking: () => ClientTracking
  }
}

export interface RedisPluginOptions {
  /** An open Redis client; the app does not close it. */
  redis: RedisClient
  /** Prefix of the service's Redis keys. */
  prefix: string
}

/**
 * The Redis capability: `redis`, `keys`, `clientTracking`. Claims the prefix for this database's
 * installation first (`redis/prefix_owner.ts`).
 * @throws {RedisPrefixOwnedError} when the prefix holds another installation's keys.
 */
async function redisPlugin(app: FastifyInstance, options: RedisPluginOptions): Promise<void> {
  app.decorate<RedisClient>('redis', options.redis)
  app.decorate('keys', new KeySpace(options.prefix))
  const claim = await claimRedisPrefix(options.redis, app.keys, app.installationId)
  if (typeof claim === 'object')
    app.log.warn(
      { err: claim.unchecked },
      'could not check which installation owns REDIS_PREFIX; starting anyway',
    )
  let tracking: ClientTracking | undefined
  app.decorate('clientTracking', () => {
    tracking ??= new ClientTracking(options.redis, { connectionName: 'video-api-tracking' })
    return tracking
  })
  // registered first, so closed after the plugins that read through it
  app.addHook('onClose', async () => tracking?.close())
}

export default fp(redisPlugin, { name: 'redis', fastify: '5.x', dependencies: ['database'] })
