import type { FastifyInstance } from 'fastify'
import { isVideoPayload, withCounts } from './overlay.js'
import type { CountersService } from './service.js'

/**
 * Puts live counts (and the caller's `liked` / `favorited`) into every video
 * a successful GET returns — a video, `{ items: Video[] }` (feed, lists, my
 * likes) or `{ items: { video }[] }` (rankings) — from the in-process live-counts
 * layer: at most one batched Redis read per response, none for fresh anonymous
 * counts, whatever route produced it (see {@link withCounts}). `GET /videos/:id` writes its own
 * JSON text (counters/video_json.ts): a string payload skips this hook.
 */
export function registerCountsOverlay(app: FastifyInstance, counters: CountersService): void {
  const onStale = counters.metrics?.staleRead
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
      const [video] = await withCounts(counters.live, [payload], viewer, onStale)
      return video
    }
    const items = (payload as { items?: unknown }).items
    if (!Array.isArray(items) || items.length === 0) return payload
    if (items.every(isVideoPayload)) {
      return { ...payload, items: await withCounts(counters.live, items, viewer, onStale) }
    }
    const nested = items.map((item) => (item as { video?: unknown } | null)?.video)
    if (nested.every(isVideoPayload)) {
      const videos = await withCounts(counters.live, nested, viewer, onStale)
      return { ...payload, items: items.map((item, i) => ({ ...(item as object), video: videos[i] })) }
    }
    return payload
  })
}
