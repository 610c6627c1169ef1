export { CountersDatabaseError, RebuildAbortedError } from './errors.js'
export { LiveCounts } from './live_counts.js'
export {
  type CountsFallback,
  type FallbackCounts,
  LIVE_COUNTS_DEFAULTS,
  type LiveCountsOptions,
  liveCountsEntryBytes,
} from './live_counts_options.js'
export type { LiveCountsRead, LiveCountsStats, LiveItemCounts } from './live_counts_types.js'
export {
  type CountsBatchRead,
  type CountsRead,
  CountsReader,
  type CountsReaderOptions,
  type CountsUnavailableReason,
  type FlagQuery,
  flagKey,
  type ItemCounts,
  type RecoveryView,
  type ViewerFlags,
} from './read_counts.js'
export type { RebuildMode, RebuildReport } from './rebuild.js'
export type { ColumnDrift, CountTriple, Drift, ReconcileReport } from './reconcile.js'
export {
  CountsRecovery,
  type CountsRecoveryOptions,
  type RebuildOutcome,
  type RecoveryEvent,
  type RecoveryState,
} from './recovery.js'
export { RECOVERY_DEFAULTS } from './recovery_defaults.js'
