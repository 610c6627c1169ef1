import type { FastifyInstance } from 'fastify'
import { guardedExecutor } from '../db/guard.js'
import { isVideoPayload, withCounts } from './overlay.js'
import type { CountersService } from './service.js'

/**
 * Puts live counts (and the caller's `liked` / `favorited`) into every video
 * a successful GET returns — a video, `{ items: Video[] }` (feed, lists, my
 * likes) or `{ items: { video }[] }` (rankings) — with ONE pipelined Redis round
 * trip per response, whatever route produced it (see {@link withCounts}).
 */
export function registerCountsOverlay(app: FastifyInstance, counters: CountersService): void {
  const onStale = counters.metrics?.staleRead
  // A count fallback the database guard sheds fails like a database error: the payload's counts, marked stale.
  const sql = guardedExecutor(counters.sql, app.deps.dbGuard)
  app.addHook('preSerialization', async (request, reply, payload: unknown) => {
    if (
      request.method !== 'GET' ||
      reply.statusCode >= 300 ||
      typeof payload !== 'object' ||
      payload === null
    )
      return payload
    const viewer = request.userId
    if (isVideoPayload(payload)) {
      const [video] = await withCounts(counters.reader, sql, [payload], viewer, onStale)
      return video
    }
    const items = (payload as { items?: unknown }).items
    if (!Array.isArray(items) || items.length === 0) return payload
    if (items.every(isVideoPayload)) {
      return { ...payload, items: await withCounts(counters.reader, sql, items, viewer, onStale) }
    }
    const nested = items.map((item) => (item as { video?: unknown } | null)?.video)
    if (nested.every(isVideoPayload)) {
      const videos = await withCounts(counters.reader, sql, nested, viewer, onStale)
      return { ...payload, items: items.map((item, i) => ({ ...(item as object), video: videos[i] })) }
    }
    return payload
  })
}
