import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { BloomRebuildError, LockTimeoutError } from 'floodgate'
import { Type } from 'typebox'
import { VideoIdsReadError } from '../cache/install.js'
import { ApiError } from '../http/api_error.js'
import { withoutIdleTimeout } from '../http/long_request.js'
import { errorResponses } from '../http/schemas.js'
import { requireAdmin } from './admin_counters.js'

const BloomRebuildResult = Type.Object({
  items: Type.Integer({ description: 'live video ids written into the new generation' }),
  durationMs: Type.Integer({ description: 'wall time of the rebuild (ms)' }),
  generation: Type.Integer({ description: 'the generation now served' }),
  bits: Type.Integer({ description: 'filter size m (bits)' }),
  hashes: Type.Integer({ description: 'hash functions k' }),
  shards: Type.Integer({ description: 'Redis keys the bits are split over' }),
})

/** No parameters: an unknown one (say `?mode=replace`, which the counters rebuild has) is a 400, not ignored. */
const NoQuery = Type.Object({}, { additionalProperties: false })

/**
 * `POST /admin/rebuild/bloom`: rebuilds the videos Bloom filter from PostgreSQL
 * now (ids streamed in chunks into a new generation, then switched to
 * atomically; queries keep using the previous generation meanwhile). Admins
 * only (401 anonymous, 403 not in ADMIN_USER_IDS). 409 while a rebuild runs on
 * any instance (the library's rebuild lock in Redis, not waited for); 503 when
 * Redis or PostgreSQL fails or the rebuild is interrupted (the served
 * generation is then unchanged); 404 when this instance has no read cache; 400 on any query
 * parameter. It answers when the rebuild is done, however long that takes (the connection's
 * idle timeout is suspended meanwhile).
 */
export function adminBloomRoutes(app: FastifyInstance): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  r.post(
    '/admin/rebuild/bloom',
    {
      schema: {
        security: [{ bearerAuth: [] }],
        querystring: NoQuery,
        description:
          'Rebuild the videos Bloom filter from PostgreSQL. 409: a rebuild is running (here or on another instance); 503: Redis or PostgreSQL unavailable.',
        response: { 200: BloomRebuildResult, ...errorResponses },
      },
    },
    async (request) => {
      const adminId = requireAdmin(request, app.counters)
      const cache = app.videoCache
      if (cache === null)
        throw new ApiError(
          'NOT_FOUND',
          'no Bloom filter here: the read cache is off (CACHE_ENABLED, CACHE_MODE)',
        )
      if (app.redis.status !== 'ready') throw new ApiError('UNAVAILABLE', 'Redis is unavailable')
      request.log.warn({ adminId }, 'admin: rebuilding the videos Bloom filter from PostgreSQL')
      try {
        return await withoutIdleTimeout(request, () => cache.rebuildBloom())
      } catch (error) {
        throw rebuildProblem(error)
      }
    },
  )
}

/** The problem a failed rebuild answers with: 409 locked, else 503 (logged by the problem handler). */
function rebuildProblem(error: unknown): ApiError {
  if (error instanceof LockTimeoutError)
    return new ApiError('CONFLICT', 'a Bloom rebuild is already running (this or another instance)')
  if (error instanceof VideoIdsReadError)
    return new ApiError('UNAVAILABLE', 'reading the video ids from PostgreSQL failed', { cause: error })
  if (error instanceof BloomRebuildError)
    return new ApiError('UNAVAILABLE', `the rebuild did not complete: ${error.message}`, { cause: error })
  // Everything else the rebuild does is a Redis command (lock, allocation, pipelined writes, switch).
  return new ApiError('UNAVAILABLE', 'Redis failed during the rebuild', { cause: error })
}
