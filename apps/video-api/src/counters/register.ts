import type { FastifyInstance } from 'fastify'
import type { Registry } from 'prom-client'
import type { RouteDeps } from '../http/deps.js'
import { adminCounterRoutes } from '../routes/admin_counters.js'
import { myInteractionRoutes } from '../routes/my_interactions.js'
import { rankingRoutes } from '../routes/rankings.js'
import { videoStatsRoutes } from '../routes/video_stats.js'
import { registerCountersMetrics } from './metrics.js'
import { registerCountsOverlay } from './payload_hook.js'
import { type CountersService, type CountersSettings, createCountersService } from './service.js'

export type { CountersSettings } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts read path, epoch monitor / rebuild, rankings. */
    counters: CountersService
  }
}

/**
 * Counts, rankings and recovery in the service: the counts overlay on every
 * video payload, `GET /videos/:id/stats`, `GET /me/likes|favorites`,
 * `GET /rankings/hot`, the admin rebuild/reconcile endpoints, and the Redis
 * epoch monitor (first check and start-up rebuild when the app gets ready,
 * then every `checkIntervalMs`; stopped when the app closes).
 */
export function registerCounters(
  app: FastifyInstance,
  deps: RouteDeps,
  settings?: CountersSettings,
  registry?: Registry,
): CountersService {
  const metrics = registry ? registerCountersMetrics(registry, () => counters) : undefined
  const counters: CountersService = createCountersService({
    redis: deps.redis,
    db: deps.db,
    prefix: deps.keys.prefix,
    log: app.log,
    settings,
    metrics,
    dbGuard: deps.dbGuard,
  })
  app.decorate('counters', counters)
  registerCountsOverlay(app, counters)
  videoStatsRoutes(app, deps, counters)
  myInteractionRoutes(app, deps)
  rankingRoutes(app, deps, counters)
  adminCounterRoutes(app, counters)
  app.addHook('onReady', async () => {
    await counters.recovery.waitUntilServing(counters.settings.startupWaitMs)
    counters.recovery.start()
  })
  app.addHook('onClose', () => counters.close())
  return counters
}
