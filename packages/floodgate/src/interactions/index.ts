// the flush's database seam (src/sql), re-exported so the flush's public API is complete
export {
  type PgCopyFrom,
  type PgCopyStream,
  type PgPoolDatabaseOptions,
  type PgPoolLike,
  pgPoolDatabase,
  type SqlDatabase,
  type SqlExecutor,
} from '../sql/index.js'
export { type ApplyResult, InteractionApplier, netEvents } from './apply.js'
export {
  FORGET_DEFAULTS,
  INTERACTION_DEFAULTS,
  MEMBER_BUCKET_DEFAULTS,
  PLAY_DEDUPE_DEFAULTS,
} from './defaults.js'
export { InvalidEventError, ItemGoneError, isPoisonError, ReplicationTimeoutError } from './errors.js'
export {
  type InteractionEvent,
  type MembershipEvent,
  type PlayEvent,
  parseInteractionEvent,
} from './events.js'
export { checkEvictionPolicy, type EvictionPolicyReport } from './eviction_policy.js'
export { createInteractionFlush, type InteractionFlushOptions } from './flush.js'
export { type ForgetReport, type ForgetSettings, forgetItem } from './forget.js'
export { canonicalId, type EntityId } from './ids.js'
export { Interactions, type PlayResult, type ToggleResult } from './interactions.js'
export { InteractionKeys, type MemberKind, type RankMetric } from './keys.js'
export { type InteractionLayout, type InteractionLayoutOptions, interactionLayout } from './layout.js'
export {
  LEGACY_DRAIN_DEFAULTS,
  type LegacyDrainEvent,
  type LegacyLayoutDrain,
  startLegacyLayoutDrain,
} from './legacy_drain.js'
export { LegacyInteractionKeys } from './legacy_layout.js'
export {
  type BucketGeometry,
  bucketKeys,
  countMembers,
  dropMembers,
  type MemberCount,
  memberHash,
  readGeometry,
  readMembers,
} from './member_buckets.js'
export type { InteractionOptions, WaitForReplicas } from './options.js'
export { checkReplicas, type ReplicaReport } from './replica_check.js'
export { interactionSchemaSql } from './schema.js'
export {
  defaultInteractionTables,
  type InteractionTables,
  type InteractionTablesOptions,
  type ItemTable,
} from './tables.js'
export { isPlayViewer, playViewer, playViewerHash } from './viewer.js'
