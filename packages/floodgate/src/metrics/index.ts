export { bindBloomReplicaMetrics } from './bloom_replica_metrics.js'
export { bindCacheMetrics } from './cache_metrics.js'
