/** One stream entry handed to a batch handler. */
export interface StreamEntry {
  /** Key of the stream it came from. */
  stream: string
  /** Its stream id, `<ms>-<seq>`. */
  id: string
  /** Its fields (a repeated field name keeps the last value). */
  fields: Record<string, string>
}

/** One entry a handler could not apply, with why; it stays pending and is retried or dead-lettered. */
export interface FailedEntry {
  entry: StreamEntry
  error: unknown
}

/**
 * What a handler reports for a batch it applied. Entries not listed in
 * `failed` are acknowledged. Throwing instead fails the whole batch: a
 * poison error (see `isPoison`) splits it in halves to isolate the bad entry,
 * any other error is treated as transient and the batch is retried with
 * backoff, unacknowledged.
 */
export interface BatchOutcome {
  failed?: readonly FailedEntry[]
}

/** Applies a batch; must be idempotent, since an entry may be delivered again after a crash. */
export type BatchHandler = (entries: readonly StreamEntry[]) => Promise<BatchOutcome | undefined>

/** One stream the consumer reads and the dead-letter stream for its entries (same hash tag). */
export interface StreamSource {
  stream: string
  deadLetter: string
}

/** Lag of the consumer group over all its streams. */
export interface LagSnapshot {
  /** Entries held in the streams (sum of XLEN after trimming). */
  length: number
  /** Entries delivered and not yet acknowledged. */
  pending: number
  /** Entries not yet delivered to the group (exact when Redis tracks the group's lag, else at least 1 per stream that has some). */
  undelivered: number
  /** Age (ms, from the entry id's time to Redis TIME) of the oldest pending entry; 0 when none. */
  oldestPendingAgeMs: number
  /** Age (ms) of the oldest entry not yet delivered to the group; 0 when none. */
  oldestUndeliveredAgeMs: number
  /** Entries removed by this call's trim. */
  trimmed: number
}

/** What the consumer tells its observer (for logs). */
export type ConsumerEvent =
  | { type: 'error'; phase: 'read' | 'claim' | 'apply' | 'ack' | 'maintain' | 'dead-letter'; error: unknown }
  | { type: 'rejected'; stream: string; id: string; deliveries: number; error: unknown }
  | { type: 'dead-lettered'; stream: string; id: string; deliveries: number; error: unknown }
  | { type: 'claimed'; count: number; deleted: number }
  /** With `membersKey`: the streams this consumer reads changed (a member joined, left or went silent). */
  | { type: 'assigned'; streams: readonly string[]; members: number }

/** Counters since start, for tests and benchmarks. */
export interface ConsumerStats {
  applied: number
  batches: number
  claimed: number
  deletedWhilePending: number
  deadLettered: number
  rejected: number
  /** Entries read ahead and handed back unapplied by stop() (see {@link StreamGroupConsumer.stop}). */
  released: number
  transientFailures: number
}
