import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ItemGoneError, playViewer, ReplicationTimeoutError, StoreUnavailableError } from 'floodgate'
import { Type } from 'typebox'
import { ApiError, notFound } from '../http/api_error.js'
import { requireUser } from '../http/auth.js'
import { checkIdRange, errorResponses, IdParams } from '../http/schemas.js'
import { visibleTo } from '../videos/model.js'

const LikeState = Type.Object(
  { videoId: Type.String(), liked: Type.Boolean(), likeCount: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
)
const FavoriteState = Type.Object(
  { videoId: Type.String(), favorited: Type.Boolean(), favoriteCount: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
)
const PlayState = Type.Object(
  { videoId: Type.String(), counted: Type.Boolean(), playCount: Type.Integer({ minimum: 0 }) },
  { additionalProperties: false },
)
const auth = [{ bearerAuth: [] }]

/**
 * `PUT|DELETE /videos/:id/like`, `PUT|DELETE /videos/:id/favorite` (authenticated, idempotent:
 * a repeat answers the same state and changes nothing) and `POST /videos/:id/play` (anonymous
 * allowed: the viewer is the user, else a hash of client IP + user agent; counted once per viewer
 * per video per dedupe window). Only live videos the caller may see; 404 otherwise (also when the
 * video was deleted while the call ran: its tombstone in Redis refuses the step). Each call is
 * one Lua step in Redis; the flush consumer applies it to PostgreSQL; its answer updates this
 * instance's live counts at once. Redis down: 503. With
 * INTERACTION_WAIT_REPLICAS, also 503 when too few replicas confirmed the write in time (the write
 * may or may not survive a failover; a retry is safe: toggles are absolute, a retried play is not
 * counted twice).
 * Plays are rate limited by the service's rate-limit plugin (write quota, or a per-route quota
 * `POST /videos/:id/play` in RATE_LIMIT_ROUTES).
 */
export function interactionRoutes(app: FastifyInstance): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  const ix = app.interactions

  const visibleVideo = async (request: FastifyRequest<{ Params: { id: string } }>) => {
    const id = checkIdRange(request.params.id, 'params/id')
    const video = await app.videos.getById(id, { write: true })
    if (!video || !visibleTo(video, request.userId)) throw notFound()
    // Redis is being rebuilt after a data loss: put this video's state back first, so an unlike
    // finds the member the rebuild has not restored yet instead of being silently dropped.
    if (!app.counters.recovery.serving()) {
      await app.counters.recovery
        .restoreItem(id)
        .catch((error: unknown) =>
          request.log.warn({ err: error, videoId: id }, 'restoring a video before a toggle failed'),
        )
    }
    return id
  }

  for (const [method, liked] of [
    ['PUT', true],
    ['DELETE', false],
  ] as const) {
    r.route({
      method,
      url: '/videos/:id/like',
      schema: { security: auth, params: IdParams, response: { 200: LikeState, ...errorResponses } },
      handler: async (request) => {
        const userId = requireUser(request)
        const id = await visibleVideo(request)
        const result = await unavailableOnStoreError(ix.setLiked(id, userId, liked))
        app.counters.live.noteWrite(id, 'likes', result.count)
        return { videoId: id, liked: result.active, likeCount: result.count }
      },
    })
    r.route({
      method,
      url: '/videos/:id/favorite',
      schema: { security: auth, params: IdParams, response: { 200: FavoriteState, ...errorResponses } },
      handler: async (request) => {
        const userId = requireUser(request)
        const id = await visibleVideo(request)
        const result = await unavailableOnStoreError(ix.setFavorited(id, userId, liked))
        app.counters.live.noteWrite(id, 'favorites', result.count)
        return { videoId: id, favorited: result.active, favoriteCount: result.count }
      },
    })
  }

  r.post(
    '/videos/:id/play',
    { schema: { params: IdParams, response: { 200: PlayState, ...errorResponses } } },
    async (request) => {
      const id = await visibleVideo(request)
      const viewer =
        request.userId !== undefined
          ? playViewer({ userId: request.userId })
          : playViewer({ ip: request.ip, userAgent: request.headers['user-agent'] ?? '' })
      const result = await unavailableOnStoreError(ix.recordPlay(id, viewer))
      app.counters.live.noteWrite(id, 'plays', result.count)
      return { videoId: id, counted: result.counted, playCount: result.count }
    },
  )
}

async function unavailableOnStoreError<T>(call: Promise<T>): Promise<T> {
  try {
    return await call
  } catch (error) {
    // deleted between our visibility check and the script (Interactions.forget's tombstone)
    if (error instanceof ItemGoneError) throw notFound()
    if (error instanceof StoreUnavailableError)
      throw new ApiError('UNAVAILABLE', 'the interaction store is unavailable; retry later', { cause: error })
    if (error instanceof ReplicationTimeoutError)
      throw new ApiError(
        'UNAVAILABLE',
        'the change was not confirmed by enough Redis replicas in time; retrying is safe',
        { cause: error },
      )
    throw error
  }
}
