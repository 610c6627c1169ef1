import { INTERACTION_DEFAULTS, STREAM_CONSUMER_DEFAULTS } from 'floodgate'
import type { FieldSpec } from './spec.js'

/** Likes, favourites and plays: partitions and rankings, durability, the flush to PostgreSQL,
 * and who may run the admin rebuilds and reconcile. */
export const interactionFields = {
  adminUserIds: {
    env: 'ADMIN_USER_IDS',
    toml: 'admin_user_ids',
    default: '',
    type: { kind: 'string', allowEmpty: true },
    doc: 'Comma-separated user ids allowed on the admin endpoints (counter rebuild, Bloom rebuild, reconcile); empty = nobody.',
  },
  interactionPartitions: {
    env: 'INTERACTION_PARTITIONS',
    toml: 'interaction_partitions',
    default: String(INTERACTION_DEFAULTS.partitions),
    type: { kind: 'int', min: 1, max: 16384 },
    doc: 'Partitions of the interaction keys, streams and ranking shards (video id mod P), their hash tags on evenly spaced cluster slots (300: every master of 3, 6, 10, 30 or 100 serves an equal share); change only on drained streams (docs/operations.md, Upgrading the interaction layout).',
  },
  interactionTopK: {
    env: 'INTERACTION_TOP_K',
    toml: 'interaction_top_k',
    default: String(INTERACTION_DEFAULTS.topK),
    type: { kind: 'int', min: 1, max: 100_000 },
    doc: 'Videos kept per partition in the all-time ranking ZSETs.',
  },
  playDedupeWindowMs: {
    env: 'PLAY_DEDUPE_WINDOW_MS',
    toml: 'play_dedupe_window_ms',
    default: String(INTERACTION_DEFAULTS.playDedupeWindowMs),
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: "Play dedupe window W (ms): a viewer's repeat play of one video is not counted less than W after their counted play and is counted 2W or more after it (generations of W by Redis time), so the effective window is between W and 2W.",
  },
  interactionMaxEventsPerCall: {
    env: 'INTERACTION_MAX_EVENTS_PER_CALL',
    toml: 'interaction_max_events_per_call',
    default: String(INTERACTION_DEFAULTS.maxEventsPerCall),
    type: { kind: 'int', min: 1, max: INTERACTION_DEFAULTS.maxEventsPerCall },
    doc: "Most likes, favourites or plays of one partition sent to Redis as one script call (events): an instance's calls of one event-loop turn leave together, each answered as if alone, so no call runs long (256 ≈ 1-3 ms of Redis time). 1 = one call per event.",
  },
  interactionWaitReplicas: {
    env: 'INTERACTION_WAIT_REPLICAS',
    toml: 'interaction_wait_replicas',
    default: '0',
    type: { kind: 'int', min: 0, max: 16 },
    doc: 'Durable likes, favourites and plays: replicas that must confirm each write (Redis WAIT on the same node) before it is acknowledged; too few in time = 503, safe to retry. 0 = acknowledge once the master has it (a master crash before replication loses it).',
  },
  interactionWaitTimeoutMs: {
    env: 'INTERACTION_WAIT_TIMEOUT_MS',
    toml: 'interaction_wait_timeout_ms',
    default: '25',
    type: { kind: 'int', min: 1, max: 60_000 },
    doc: 'Longest wait for those replica confirmations (ms); must be below REDIS_MAX_WAIT_MS. Unused (and not checked) when INTERACTION_WAIT_REPLICAS is 0.',
  },
  flushBatchSize: {
    env: 'FLUSH_BATCH_SIZE',
    toml: 'flush_batch_size',
    default: String(INTERACTION_DEFAULTS.flushBatchSize),
    type: { kind: 'int', min: 1, max: 10_000 },
    doc: 'Interaction events applied to PostgreSQL per transaction by the flush consumer.',
  },
  flushClaimIdleMs: {
    env: 'FLUSH_CLAIM_IDLE_MS',
    toml: 'flush_claim_idle_ms',
    default: String(STREAM_CONSUMER_DEFAULTS.claimIdleMs),
    type: { kind: 'int', min: 1000, max: 3_600_000 },
    doc: "Idle time after which a dead instance's unacknowledged events are claimed (XAUTOCLAIM) (ms).",
  },
  flushMaxDeliveries: {
    env: 'FLUSH_MAX_DELIVERIES',
    toml: 'flush_max_deliveries',
    default: String(STREAM_CONSUMER_DEFAULTS.maxDeliveries),
    type: { kind: 'int', min: 1, max: 1000 },
    doc: 'Deliveries of an event the database rejects as bad data before it goes to the dead-letter stream.',
  },
} as const satisfies Record<string, FieldSpec>
