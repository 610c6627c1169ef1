import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { errorResponses, VideoRef } from '../http/schemas.js'
import { FEED_SIZE } from '../videos/model.js'

/** `GET /feed/recommend`: the latest {@link FEED_SIZE} published public videos. */
export function feedRoutes(app: FastifyInstance): void {
  app.get(
    '/feed/recommend',
    {
      schema: {
        querystring: Type.Object({}, { additionalProperties: false }),
        response: { 200: Type.Object({ items: Type.Array(VideoRef) }), ...errorResponses },
      },
    },
    async () => ({ items: await app.videos.recommend(FEED_SIZE) }),
  )
}
