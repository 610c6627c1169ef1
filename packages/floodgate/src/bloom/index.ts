export {
  type BloomFailOpenEvent,
  BloomFilter,
  type BloomFilterOptions,
  FAIL_OPEN_LOG_INTERVAL_MS,
} from './bloom_filter.js'
export { BLOOM_REBUILD_DEFAULTS } from './defaults.js'
export { BloomRebuildError, BloomRebuiltElsewhereError } from './errors.js'
export type { Generations } from './layout.js'
export {
  BLOOM_LIFECYCLE_DEFAULTS,
  BloomLifecycle,
  type BloomLifecycleEvent,
  type BloomLifecycleOptions,
  type BloomRebuildReport,
  type BloomRebuildState,
  type BloomTrust,
} from './lifecycle.js'
export { BitPositions, type ItemBits } from './positions.js'
export type { RebuildOptions, RebuildResult } from './rebuild.js'
export {
  BLOOM_REPLICA_DEFAULTS,
  BloomReplica,
  type BloomReplicaEvents,
  type BloomReplicaOptions,
  type BloomReplicaReloadReason,
  type BloomReplicaState,
} from './replica.js'
export {
  type BloomSize,
  bloomSize,
  defaultShards,
  expectedFalsePositiveRate,
  SHARD_TARGET_BITS,
} from './sizing.js'
