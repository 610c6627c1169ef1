import type { RedisRateLimiter } from '../ratelimit/redis_rate_limiter.js'
import type { RateLimitSource } from '../ratelimit/types.js'
import { counterSeries } from './bound_series.js'
import { promClient } from './prom_client.js'
import type { MetricsRegistry } from './registry.js'
import { sharedMetric } from './shared_metric.js'

const SOURCES: readonly RateLimitSource[] = [
  'redis',
  'lease',
  'blockedCache',
  'failOpen',
  'failClosed',
  'insurance',
]

/**
 * Registers the limiter metrics in `registry` and feeds them from `limiter.events`:
 * - `floodgate_ratelimit_decisions_total{policy,source,allowed}` counter: every decision, by who
 *   decided (`redis`, `lease`, `blockedCache`, `failOpen`, `failClosed`, `insurance`) and its answer
 *   (`allowed` = `"true"` / `"false"`); every series exists at 0 from the start, so an alert on
 *   `source="failOpen"` sees a rise from 0.
 * Several limiters may share one registry under different policy names (the metric is created once).
 */
export function bindRateLimiterMetrics(registry: MetricsRegistry, limiter: RedisRateLimiter): void {
  const { Counter } = promClient()
  const decisions = sharedMetric(registry, Counter, {
    name: 'floodgate_ratelimit_decisions_total',
    help: 'Rate limiter decisions, by who decided (redis, lease, blockedCache, or a fallback) and the answer',
    labelNames: ['policy', 'source', 'allowed'],
  })
  const policy = limiter.policy.name
  // one bound series per (source, answer), made on first use: a decision is counted on every request
  const bySource = new Map<RateLimitSource, Record<'true' | 'false', () => void>>()
  const seriesOf = (source: RateLimitSource) => {
    let series = bySource.get(source)
    if (series === undefined) {
      series = {
        true: counterSeries(decisions, { policy, source, allowed: 'true' }),
        false: counterSeries(decisions, { policy, source, allowed: 'false' }),
      }
      bySource.set(source, series)
    }
    return series
  }
  for (const source of SOURCES)
    for (const allowed of ['true', 'false']) decisions.labels(policy, source, allowed).inc(0)
  limiter.events.on('decision', ({ source, allowed }) => seriesOf(source)[allowed ? 'true' : 'false']())
}
