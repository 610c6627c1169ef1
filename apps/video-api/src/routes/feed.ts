import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { RouteDeps } from '../http/deps.js'
import { errorResponses, VideoRef } from '../http/schemas.js'

/** Size of the recommendation feed. */
export const FEED_SIZE = 20

/** `GET /feed/recommend`: the latest {@link FEED_SIZE} published public videos. */
export function feedRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    '/feed/recommend',
    {
      schema: {
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: Type.Object({ items: Type.Array(VideoRef) }), ...errorResponses },
      },
    },
    async () => ({ items: await deps.videos.recommend(FEED_SIZE) }),
  )
}
