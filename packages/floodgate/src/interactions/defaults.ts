/** Defaults of the interaction layout ({@link interactionLayout}) and write path ({@link Interactions}). */
export const INTERACTION_DEFAULTS = {
  /**
   * Partitions P. 300: for M = 3, 6, 10, 30 and 100 masters with an even slot split, every master
   * serves exactly P/M partitions (ceil(P/M) / (P/M) = 1.0); any M up to 300 stays within
   * ceil(P/M) / (P/M) of the mean. Each partition is one stream the flush polls.
   */
  partitions: 300,
  /**
   * Entries per flush transaction (the flush's `batchSize`). 5,000, not the stream consumer's
   * 1,000: in `bench:flush` at 300 partitions the same events cost 15–30 % less PostgreSQL CPU
   * and up to 40 % less consumer CPU per event (the fixed cost of a transaction, and reads that
   * take a few entries from each of hundreds of streams, spread over more events); a lightly
   * loaded flush still applies whatever one read finds, so its lag does not grow.
   */
  flushBatchSize: 5000,
  topK: 1000,
  playDedupeWindowMs: 600_000,
  bucketTtlMs: 24 * 3_600_000 + 600_000,
  /**
   * Most toggles (or plays) of one partition in one script call (`toggle-batch-n.lua`,
   * `play-batch-n.lua`): the events of one poll phase share a call up to this many, so no call
   * runs long (256 toggles ≈ 1 ms of Redis time). 1: each event is its own call (`toggle-5.lua`,
   * `play-6.lua`).
   */
  maxEventsPerCall: 256,
} as const

/** Sizes of {@link Interactions.forget} (`forget.ts`). */
export const FORGET_DEFAULTS = {
  /**
   * Life of a forgotten item's tombstone (ms): 1 hour. It must outlast every caller's stale view
   * of the item as live (a request that checked the item before its deletion and whose toggle
   * reaches Redis after the walk: request timeouts and cache TTLs, seconds to minutes); after it
   * the caller's own check (the item is deleted in its database) keeps the item out. ~70 B per
   * item forgotten in the last hour.
   */
  tombstoneTtlMs: 3_600_000,
  /** Most commands (ZREMs of the item from the minute buckets) in one pipelined step. */
  maxCommandsPerStep: 500,
} as const

/**
 * Membership buckets of a like / favourite set (`lua/includes/member-buckets.lua`): a split when
 * members > `bucketLoad` × buckets; an item stays one bucket (no meta) up to 2 × `bucketLoad`.
 * Linear hashing leaves the not-yet-split buckets at up to about 2 × `bucketLoad` members (here
 * ~256 expected, a binomial spread of ~16), far under Redis's default `set-max-intset-entries`
 * (512), so every bucket stays an intset (4–8 B a member).
 */
export const MEMBER_BUCKET_DEFAULTS = {
  /** Members per bucket on average before the next split (members, not bytes). */
  bucketLoad: 128,
  /** Most members one restore / add step (one Lua call) carries: ~1–2 ms of Redis time on an idle core. */
  maxMembersPerStep: 250,
  /** Most keys one UNLINK of a drop carries. */
  maxKeysPerUnlink: 1000,
} as const

/** Internal sizes of the play dedupe (`play-6.lua`, {@link Interactions.recordPlay}). */
export const PLAY_DEDUPE_DEFAULTS = {
  /**
   * Split load T: a generation's seen-set of n viewer hashes in b buckets splits one bucket when
   * n > T·b, so a bucket holds T hashes on average and the fullest (not yet split this round)
   * about 2T = 256, below Redis's `set-max-intset-entries` (default 512, which must not be
   * lowered under 512): every bucket stays an intset (8 bytes a hash) and a split moves one
   * bucket of about 256 hashes.
   */
  bucketLoad: 128,
} as const

/** Internal limits of the `waitForReplicas` write path ({@link ReplicatedWrites}). */
export const REPLICATED_WRITE_DEFAULTS = {
  /** Most writes in one node's batch (one pipeline, one WAIT). */
  batchMax: 128,
  /** Pause (ms) before resending a write refused with CLUSTERDOWN or TRYAGAIN (ioredis' default too). */
  clusterDownRetryMs: 100,
  /**
   * Pause (ms) before a node whose connection failed twice since its last answered WAIT (it is
   * down) is connected again; writes for it meanwhile are refused unsent. 100: a dead master
   * costs at most 10 refused connects a second instead of one per batch (194 in one 2.6 s kill
   * window of the failover test), and a restarted one is used again within 100 ms.
   */
  reconnectPauseMs: 100,
  /**
   * Shortest WAIT timeout of a batch, as a fraction of `waitForReplicas.timeoutMs`: a batch's WAIT
   * gets what is left of its oldest write's timeoutMs (time spent queued behind an earlier batch
   * or a CLUSTERDOWN retry counts), but never less than this share, so a write that queued long
   * still gets a moment for its replicas' acknowledgement.
   */
  minWaitFraction: 0.1,
} as const
