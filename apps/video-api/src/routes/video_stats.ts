import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { dbCounts } from '../counters/overlay.js'
import type { CountersService } from '../counters/service.js'
import { ApiError, notFound } from '../http/api_error.js'
import type { RouteDeps } from '../http/deps.js'
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
    description: 'true: Redis could not answer; these are the PostgreSQL count columns',
  }),
})

/** `GET /videos/:id/stats`: likes, favourites, plays (and the caller's flags), one Redis round trip. */
export function videoStatsRoutes(app: FastifyInstance, deps: RouteDeps, counters: CountersService): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get(
      '/videos/:id/stats',
      { schema: { params: IdParams, response: { 200: Stats, ...errorResponses } } },
      async (request) => {
        const id = checkIdRange(request.params.id, 'params/id')
        const video = await deps.videos.getById(id)
        if (!video || !visibleTo(video, request.userId)) throw notFound()
        const read = await counters.reader.readCounts([id], request.userId)
        if (read.ok) {
          const c = read.counts.get(id)!
          return {
            videoId: id,
            likes: c.likes,
            favorites: c.favorites,
            plays: c.plays,
            liked: c.liked,
            favorited: c.favorited,
            stale: false,
          }
        }
        counters.metrics?.staleRead(read.reason)
        const c = (await deps.dbGuard.run(() => dbCounts(counters.sql, [id], request.userId)))?.get(id)
        if (!c) throw new ApiError('UNAVAILABLE', 'counts are unavailable (Redis and the database failed)')
        return { videoId: id, ...c, stale: true }
      },
    )
}
