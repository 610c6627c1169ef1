export { bindBloomReplicaMetrics } from './bloom_replica_metrics.js'
export { bindCacheMetrics } from './cache_metrics.js'
export { bindGuardMetrics } from './guard_metrics.js'
