import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { registerCountersMetrics } from '../counters/metrics.js'
import { registerCountsOverlay } from '../counters/payload_hook.js'
import { type CountersService, type CountersSettings, createCountersService } from '../counters/service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts read path, epoch monitor / rebuild, rankings. */
    counters: CountersService
  }
}

/**
 * Counts and rankings: the counts overlay on every video payload and the Redis epoch monitor
 * (first check and start-up rebuild when the app gets ready, then every `checkIntervalMs`;
 * stopped when the app closes). The counter routes read `app.counters`.
 */
async function countersPlugin(app: FastifyInstance, settings: CountersSettings): Promise<void> {
  const metrics = registerCountersMetrics(app.metrics, () => counters)
  const counters: CountersService = createCountersService({
    redis: app.redis,
    db: app.db,
    layout: app.interactionLayout,
    log: app.log,
    settings,
    metrics,
    dbGuard: app.dbGuard,
    clientTracking: app.clientTracking,
  })
  app.decorate('counters', counters)
  registerCountsOverlay(app, counters)
  app.addHook('onReady', async () => {
    await counters.recovery.waitUntilServing(counters.settings.startupWaitMs)
    counters.recovery.start()
  })
  app.addHook('onClose', () => counters.close())
}

export default fp(countersPlugin, {
  name: 'counters',
  fastify: '5.x',
  dependencies: ['database', 'redis', 'interactions', 'metrics'],
})
