import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { type InteractionOptions, Interactions } from 'floodgate'

declare module 'fastify' {
  interface FastifyInstance {
    /** Likes, favourites and plays: the Redis write path. */
    interactions: Interactions
  }
}

/** The interaction write path on the app's Redis, under its prefix. */
async function interactionsPlugin(
  app: FastifyInstance,
  options: Omit<InteractionOptions, 'prefix'>,
): Promise<void> {
  app.decorate('interactions', new Interactions(app.redis, { ...options, prefix: app.keys.prefix }))
}

export default fp(interactionsPlugin, { name: 'interactions', fastify: '5.x', dependencies: ['redis'] })
