export { bindBloomReplicaMetrics } from './bloom_replica_metrics.js'
export {
  type CounterLike,
  counterSeries,
  type HistogramLike,
  histogramSeries,
  type SeriesLabels,
} from './bound_series.js'
export { bindCacheMetrics } from './cache_metrics.js'
export { bindGuardMetrics } from './guard_metrics.js'
export { bindMutexMetrics } from './mutex_metrics.js'
export { bindRateLimiterMetrics } from './ratelimit_metrics.js'
export type { MetricsRegistry } from './registry.js'
