import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { StreamGroupConsumer } from 'floodgate'
import { type FlushSettings, startInteractionFlush } from '../interactions/flush.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** This instance's consumer of the interaction streams; `null` when it runs elsewhere. */
    interactionFlush: StreamGroupConsumer | null
  }
}

export interface FlushPluginOptions {
  /** Run the consumer here. */
  enabled: boolean
  settings: FlushSettings
}

/** The interaction flush consumer (lag metrics on /metrics), stopped when the app closes. */
async function flushPlugin(app: FastifyInstance, options: FlushPluginOptions): Promise<void> {
  if (!options.enabled) {
    app.decorate('interactionFlush', null)
    return
  }
  const { flush, legacyDrain } = startInteractionFlush({
    redis: app.redis,
    db: app.db,
    layout: app.interactionLayout,
    registry: app.metrics,
    log: app.log,
    settings: options.settings,
  })
  app.decorate('interactionFlush', flush)
  app.addHook('onClose', async () => {
    await legacyDrain.stop()
    await flush.stop()
  })
}

export default fp(flushPlugin, {
  name: 'flush',
  fastify: '5.x',
  dependencies: ['database', 'redis', 'interactions', 'metrics'],
})
