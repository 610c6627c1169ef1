import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { KeySpace, type RedisClient } from 'floodgate'

declare module 'fastify' {
  interface FastifyInstance {
    /** The request-path Redis client (the app does not close it). */
    redis: RedisClient
    /** Key builder under REDIS_PREFIX. */
    keys: KeySpace
  }
}

export interface RedisPluginOptions {
  /** An open Redis client; the app does not close it. */
  redis: RedisClient
  /** Prefix of the service's Redis keys. */
  prefix: string
}

/** The Redis capability: `redis`, `keys`. */
async function redisPlugin(app: FastifyInstance, options: RedisPluginOptions): Promise<void> {
  app.decorate<RedisClient>('redis', options.redis)
  app.decorate('keys', new KeySpace(options.prefix))
}

export default fp(redisPlugin, { name: 'redis', fastify: '5.x' })
