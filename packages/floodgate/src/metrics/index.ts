export { bindCacheMetrics } from './cache_metrics.js'
