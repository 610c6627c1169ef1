import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ClientTracking, KeySpace, type RedisClient } from 'floodgate'

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

/** The Redis capability: `redis`, `keys`, `clientTracking`. */
async function redisPlugin(app: FastifyInstance, options: RedisPluginOptions): Promise<void> {
  app.decorate<RedisClient>('redis', options.redis)
  app.decorate('keys', new KeySpace(options.prefix))
  let tracking: ClientTracking | undefined
  app.decorate('clientTracking', () => {
    tracking ??= new ClientTracking(options.redis, { connectionName: 'video-api-tracking' })
    return tracking
  })
  // registered first, so closed after the plugins that read through it
  app.addHook('onClose', async () => tracking?.close())
}

export default fp(redisPlugin, { name: 'redis', fastify: '5.x' })
