import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { videoRebuildReport, videoReconcileReport } from '../counters/video_reports.js'
import { ApiError, forbidden } from '../http/api_error.js'
import { requireUser } from '../http/auth.js'
import { withoutIdleTimeout } from '../http/long_request.js'
import { errorResponses } from '../http/schemas.js'

const auth = [{ bearerAuth: [] }]
const Triple = Type.Object({ likes: Type.Integer(), favorites: Type.Integer(), plays: Type.Integer() })

const RebuildQuery = Type.Object(
  {
    mode: Type.Optional(
      Type.Union([Type.Literal('merge'), Type.Literal('replace')], {
        description:
          'merge (default): add DB members, play counters = max(Redis, DB); replace: make Redis equal to the DB (use on a drained stream)',
      }),
    ),
  },
  { additionalProperties: false },
)

const RebuildResult = Type.Object({
  mode: Type.String(),
  likeRows: Type.Integer(),
  favoriteRows: Type.Integer(),
  playVideos: Type.Integer(),
  durationMs: Type.Integer(),
  epoch: Type.String(),
})

const ReconcileQuery = Type.Object(
  {
    maxVideos: Type.Optional(
      Type.String({
        pattern: '^[1-9][0-9]{0,8}$',
        description: 'check at most this many videos (lowest ids)',
      }),
    ),
  },
  { additionalProperties: false },
)

const ReconcileResult = Type.Object({
  checked: Type.Integer(),
  drifted: Type.Array(Type.Object({ videoId: Type.String(), redis: Triple, db: Triple })),
  columnDrift: Type.Array(Type.Object({ videoId: Type.String(), columns: Triple, db: Triple })),
})

/** The admin's user id. @throws {ApiError} `UNAUTHORIZED` when anonymous, `FORBIDDEN` when not in `ADMIN_USER_IDS`. */
export function requireAdmin(request: FastifyRequest, admins: { adminUserIds: ReadonlySet<string> }): string {
  const userId = requireUser(request)
  if (!admins.adminUserIds.has(userId)) throw forbidden('admin only (ADMIN_USER_IDS)')
  return userId
}

/**
 * `POST /admin/rebuild/counters[?mode=merge|replace]`: rebuild Redis sets, play
 * counters and all-time rankings from PostgreSQL now (409 if another instance is
 * rebuilding). `GET /admin/reconcile[?maxVideos=N]`: drift between Redis and the
 * DB detail rows, and between the count columns and the detail rows. Admins only.
 */
export function adminCounterRoutes(app: FastifyInstance): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  r.post(
    '/admin/rebuild/counters',
    {
      schema: {
        security: auth,
        querystring: RebuildQuery,
        response: { 200: RebuildResult, ...errorResponses },
      },
    },
    async (request) => {
      const adminId = requireAdmin(request, app.counters)
      const mode = request.query.mode ?? 'merge'
      request.log.warn({ adminId, mode }, 'admin: rebuilding Redis counters from PostgreSQL')
      const outcome = await withoutIdleTimeout(request, () =>
        app.counters.recovery.rebuild({ mode, waitMs: 0 }),
      )
      if (outcome.rebuilt) return { ...videoRebuildReport(outcome.report), epoch: outcome.epoch }
      if (outcome.reason === 'locked')
        throw new ApiError('CONFLICT', 'another instance is rebuilding the counters')
      throw new ApiError('UNAVAILABLE', 'the rebuild was aborted; see the logs', { cause: outcome.error })
    },
  )
  r.get(
    '/admin/reconcile',
    {
      schema: {
        security: auth,
        querystring: ReconcileQuery,
        response: { 200: ReconcileResult, ...errorResponses },
      },
    },
    async (request) => {
      requireAdmin(request, app.counters)
      const maxVideos = request.query.maxVideos === undefined ? undefined : Number(request.query.maxVideos)
      return videoReconcileReport(
        await withoutIdleTimeout(request, () => app.counters.recovery.reconcile({ maxItems: maxVideos })),
      )
    },
  )
}
