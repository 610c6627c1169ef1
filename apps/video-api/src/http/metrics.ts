import type { FastifyInstance } from 'fastify'
import { histogramSeries } from 'floodgate'
import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import { SERVICE } from '../service_info.js'

/**
 * Prometheus metrics on `GET /metrics`: prom-client's default process
 * metrics, `http_request_duration_seconds` (s) by method, route template
 * and status, and `video_api_build_info` (always 1; service, version and Node.js
 * version as labels, the usual `*_build_info` pattern). One registry per app,
 * so several apps can live in one process.
 */
export function registerMetrics(app: FastifyInstance): Registry {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  new Gauge({
    name: 'video_api_build_info',
    help: 'Always 1; the labels say which build of video-api this is',
    labelNames: ['service', 'version', 'nodejs_version'] as const,
    registers: [registry],
  }).set({ service: SERVICE.name, version: SERVICE.version, nodejs_version: process.version }, 1)
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency (s) by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  })
  // one bound series per (method, route, status): routes are templates and statuses few, so the
  // maps stay small; an observe through prom-client's labels object cost ~0.6 µs a request
  const series = new Map<string, Map<string, Map<number, (seconds: number) => void>>>()
  const seriesOf = (method: string, route: string, status: number) => {
    const byStatus = entry(
      entry(series, method, () => new Map()),
      route,
      () => new Map(),
    )
    return entry(byStatus, status, () => histogramSeries(duration, { method, route, status: String(status) }))
  }
  // callback hooks (here and in http/request_id.ts): no promise per request
  app.addHook('onResponse', (request, reply, done) => {
    seriesOf(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
    )(reply.elapsedTime / 1000)
    done()
  })
  // a scraper may be set up to send a bearer token of its own: not one of ours, not a reason for 401
  const config = { ignoresAuthorization: true }
  app.get('/metrics', { config, schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType)
    return registry.metrics()
  })
  return registry
}

/** `map.get(key)`, made with `make` and stored on first use. */
function entry<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key)
  if (value === undefined) {
    value = make()
    map.set(key, value)
  }
  return value
}
