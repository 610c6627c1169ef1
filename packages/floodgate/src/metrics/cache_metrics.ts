import { CACHE_OUTCOMES, type CacheEventEmitter, type CacheOutcome } from '../cache/events.js'
import type { BreakerState } from '../circuit_breaker/index.js'
import { counterSeries, histogramSeries } from './bound_series.js'
import { promClient } from './prom_client.js'
import type { MetricsRegistry } from './registry.js'
import { sharedMetric } from './shared_metric.js'

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 }

/**
 * Registers the cache metrics in `registry` and feeds them from `events`:
 * - `floodgate_cache_events_total{cache,outcome}` counter;
 * - `floodgate_cache_breaker_state{cache}` gauge: 0 closed, 1 half-open, 2 open;
 * - `floodgate_cache_load_duration_seconds{cache}` histogram of loader time (s).
 * Several caches may share one registry (the metrics are created once).
 */
export function bindCacheMetrics(registry: MetricsRegistry, cache: string, events: CacheEventEmitter): void {
  const { Counter, Gauge, Histogram } = promClient()
  const counter = sharedMetric(registry, Counter, {
    name: 'floodgate_cache_events_total',
    help: 'Cache outcomes: hits per tier, negative hits, Bloom rejects, loads, lock waits, wait time-outs, stale served, Redis errors, corrupt entries',
    labelNames: ['cache', 'outcome'],
  })
  const gauge = sharedMetric(registry, Gauge, {
    name: 'floodgate_cache_breaker_state',
    help: 'L2 circuit breaker state: 0 closed, 1 half-open, 2 open',
    labelNames: ['cache'],
  })
  const histogram = sharedMetric(registry, Histogram, {
    name: 'floodgate_cache_load_duration_seconds',
    help: 'Loader duration (s)',
    labelNames: ['cache'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  })
  // one bound series per outcome: an outcome is counted on every cache read
  const outcomes = new Map<CacheOutcome, () => void>()
  for (const outcome of CACHE_OUTCOMES) {
    counter.labels(cache, outcome).inc(0)
    outcomes.set(outcome, counterSeries(counter, { cache, outcome }))
  }
  gauge.labels(cache).set(0)
  const observeLoad = histogramSeries(histogram, { cache })
  events.on('outcome', (event) => {
    outcomes.get(event.outcome)?.()
    if (event.outcome === 'load' && event.durationMs !== undefined) observeLoad(event.durationMs / 1000)
  })
  events.on('breaker', ({ state }) => gauge.labels(cache).set(BREAKER_VALUE[state]))
}
