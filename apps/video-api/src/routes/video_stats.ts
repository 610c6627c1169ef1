import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { ApiError, notFound } from '../http/api_error.js'
import { checkIdRange, errorResponses, IdParams } from '../http/schemas.js'
import { visibleTo } from '../videos/model.js'

const Stats = Type.Object({
  videoId: Type.String(),
  likes: Type.Integer(),
  favorites: Type.Integer(),
  plays: Type.Integer(),
  liked: Type.Optional(Type.Boolean({ description: 'the caller likes it (authenticated only)' })),
  favorited: Type.Optional(Type.Boolean({ description: 'the caller favourited it (authenticated only)' })),
  stale: Type.Boolean({
    description:
      'true: not read from Redis within the freshness bound (COUNTS_MAX_AGE_MS): Redis could not answer; the last Redis counts or the PostgreSQL count columns',
  }),
})

/** `GET /videos/:id/stats`: likes, favourites, plays (and the caller's flags), from the live-counts layer. */
export function videoStatsRoutes(app: FastifyInstance): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get(
      '/videos/:id/stats',
      { schema: { params: IdParams, response: { 200: Stats, ...errorResponses } } },
      async (request) => {
        const id = checkIdRange(request.params.id, 'params/id')
        const video = await app.videos.getById(id)
        if (!video || !visibleTo(video, request.userId)) throw notFound()
        const read = await app.counters.live.read([id], request.userId)
        if (read.unavailable) app.counters.metrics?.staleRead(read.unavailable)
        const c = read.counts.get(id)
        if (!c) throw new ApiError('UNAVAILABLE', 'counts are unavailable (Redis and the database failed)')
        return {
          videoId: id,
          likes: c.likes,
          favorites: c.favorites,
          plays: c.plays,
          liked: c.liked,
          favorited: c.favorited,
          stale: c.stale,
        }
      },
    )
}
