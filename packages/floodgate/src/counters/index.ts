export { CountersDatabaseError, RebuildAbortedError } from './errors.js'
export {
  LiveCounts,
  type LiveCountsRead,
  type LiveCountsStats,
  type LiveVideoCounts,
} from './live_counts.js'
export {
  type CountsFallback,
  type FallbackCounts,
  LIVE_COUNTS_DEFAULTS,
  type LiveCountsOptions,
  liveCountsEntryBytes,
} from './live_counts_options.js'
export {
  type CountsBatchRead,
  type CountsRead,
  CountsReader,
  type CountsReaderOptions,
  type CountsUnavailableReason,
  type FlagQuery,
  flagKey,
  type RecoveryView,
  type VideoCounts,
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
export type { InteractionTables } from './tables.js'
