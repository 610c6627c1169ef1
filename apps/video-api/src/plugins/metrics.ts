import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { bindGuardMetrics } from 'floodgate'
import type { Registry } from 'prom-client'
import { registerMetrics } from '../http/metrics.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's Prometheus registry (`GET /metrics`). */
    metrics: Registry
  }
}

/** `/metrics`, HTTP durations, and the database's query and guard metrics. */
async function metricsPlugin(app: FastifyInstance): Promise<void> {
  const registry = registerMetrics(app)
  app.queries.register(registry)
  bindGuardMetrics(registry, app.dbGuard)
  app.decorate('metrics', registry)
}

export default fp(metricsPlugin, { name: 'metrics', fastify: '5.x', dependencies: ['database'] })
