import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { type InteractionLayout, type InteractionOptions, Interactions, interactionLayout } from 'floodgate'
import { videoInteractionTables } from '../interactions/tables.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Likes, favourites and plays: the Redis write path. */
    interactions: Interactions
    /** Prefix, partitions, top K and tables: built once, shared by the write path, flush, counts and rankings. */
    interactionLayout: InteractionLayout
  }
}

/**
 * The interaction layout (under the app's prefix) and the write path on the app's Redis. A deleted
 * video's interaction state leaves Redis in the writer's hook (`Interactions.forget`: bounded
 * steps, then a tombstone that answers later likes and plays with 404); the 204 waits for it. An
 * unpublished or private video keeps its state: its owner still sees it and may like it.
 */
async function interactionsPlugin(
  app: FastifyInstance,
  options: Omit<InteractionOptions, 'prefix'>,
): Promise<void> {
  const { partitions, topK, ...writePath } = options
  const layout = interactionLayout({
    prefix: app.keys.prefix,
    partitions,
    topK,
    tables: videoInteractionTables,
  })
  app.decorate('interactionLayout', layout)
  const interactions = new Interactions(app.redis, { ...layout, ...writePath })
  app.decorate('interactions', interactions)
  app.videoWriter.onVideoChanged(async (id, change) => {
    if (change === 'deleted') await interactions.forget(id)
  })
}

export default fp(interactionsPlugin, {
  name: 'interactions',
  fastify: '5.x',
  dependencies: ['redis', 'repositories'],
})
