/** Defaults of the interaction layout ({@link interactionLayout}) and write path ({@link Interactions}). */
export const INTERACTION_DEFAULTS = {
  partitions: 16,
  topK: 1000,
  playDedupeWindowMs: 600_000,
  bucketTtlMs: 24 * 3_600_000 + 600_000,
} as const

/** Internal sizes of the play dedupe (`play-5.lua`, {@link Interactions.recordPlay}). */
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
   * Shortest WAIT timeout of a batch, as a fraction of `waitForReplicas.timeoutMs`: a batch's WAIT
   * gets what is left of its oldest write's timeoutMs (time spent queued behind an earlier batch
   * or a CLUSTERDOWN retry counts), but never less than this share, so a write that queued long
   * still gets a moment for its replicas' acknowledgement.
   */
  minWaitFraction: 0.1,
} as const
