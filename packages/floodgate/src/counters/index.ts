export { CountersDatabaseError, RebuildAbortedError } from './errors.js'
export {
  type CountsRead,
  CountsReader,
  type CountsReaderOptions,
  type CountsUnavailableReason,
  type RecoveryView,
  type VideoCounts,
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
