export { bindCacheMetrics } from './cache_metrics.js'
export { bindGuardMetrics } from './guard_metrics.js'
export { bindMutexMetrics } from './mutex_metrics.js'
export { bindRateLimiterMetrics } from './ratelimit_metrics.js'
