import { integerIn, nonNegativeInteger, positiveInteger } from '../validation/index.js'
import { INTERACTION_DEFAULTS } from './defaults.js'
import { interactionLayout } from './layout.js'

/** Options of the interaction write path ({@link Interactions}). */
export interface InteractionOptions {
  /** Key prefix, e.g. the service's `REDIS_PREFIX`. Required. */
  prefix: string
  /**
   * Number of partitions P, 1–16,384; item i lives in partition `i mod P` (hash tag
   * `InteractionKeys.tagOf(p)`, slots evenly spaced).
   * @default 300 ({@link INTERACTION_DEFAULTS}: with 3, 6, 10, 30 or 100 masters each serves an equal share)
   */
  partitions?: number
  /**
   * Entries kept in each partition's all-time ranking ZSET (top K per partition), 1–100,000.
   * @default 1000
   */
  topK?: number
  /**
   * Play dedupe window W (ms): a viewer's repeat play of an item is not counted less than W after
   * their counted play, and is counted 2W or more after it (generations of W ms by Redis time;
   * see {@link Interactions.recordPlay}): the effective window is between W and 2W.
   * @default 600000 (10 min: repeats count again after 10 to 20 min)
   */
  playDedupeWindowMs?: number
  /**
   * TTL (ms) of a per-minute ranking bucket: the longest window (24 h) plus a margin (10 min).
   * @default 87000000
   */
  bucketTtlMs?: number
  /**
   * Most toggles (or plays) of one partition sent as one script call, 1–256: the calls one process
   * makes in one event-loop poll phase leave as one call per partition (`toggle-batch-n.lua`,
   * `play-batch-n.lua`), each caller answered as if its call had run alone, in call order.
   * 1: one script call per event (`toggle-5.lua`, `play-6.lua`).
   * @default 256
   */
  maxEventsPerCall?: number
  /**
   * Durable acknowledgement: each write step is confirmed by `WAIT replicas timeoutMs` on the
   * node that ran it. Fewer confirmations than `replicas` throw {@link ReplicationTimeoutError}.
   * Redis replication is asynchronous: without it a write the master acknowledged and then lost
   * in a crash (before its replica copied it) is gone. Costs one replica round trip per batch of
   * writes. WAIT blocks the connection it runs on, so the writes get connections of their own,
   * one per node, and each node's writes go in batches, one WAIT per batch: a write waits at
   * most for the batch in flight, and when that batch's WAIT falls short (the node has too few
   * replicas now) it is refused without running, so every write answers within about
   * `timeoutMs` (see {@link Interactions.close}). Keep `timeoutMs` below the client's command
   * timeout. `replicas: 0` = off.
   * @default undefined (off: acknowledged once the master ran the step)
   */
  waitForReplicas?: WaitForReplicas
}

/** Shape of {@link InteractionOptions.waitForReplicas}. */
export interface WaitForReplicas {
  /** Replicas that must confirm each write (integer >= 0; 0 = do not wait). */
  replicas: number
  /** Longest wait for them (ms, integer >= 1; WAIT's 0 = forever is refused). */
  timeoutMs: number
}

export type ResolvedInteractionOptions = Required<Omit<InteractionOptions, 'waitForReplicas'>> & {
  /** `undefined` when off (unset or `replicas: 0`). */
  waitForReplicas: WaitForReplicas | undefined
}

/**
 * Applies defaults and checks ranges (prefix, partitions and topK as {@link interactionLayout}).
 * @throws {InvalidArgumentError} naming the field.
 */
export function resolveInteractionOptions(options: InteractionOptions): ResolvedInteractionOptions {
  const { partitions, topK } = interactionLayout(options)
  const o = { ...INTERACTION_DEFAULTS, ...options, partitions, topK }
  positiveInteger('playDedupeWindowMs', o.playDedupeWindowMs)
  positiveInteger('bucketTtlMs', o.bucketTtlMs)
  integerIn('maxEventsPerCall', o.maxEventsPerCall, 1, INTERACTION_DEFAULTS.maxEventsPerCall)
  const wait = options.waitForReplicas
  if (wait !== undefined) {
    nonNegativeInteger('waitForReplicas.replicas', wait.replicas)
    positiveInteger('waitForReplicas.timeoutMs', wait.timeoutMs)
  }
  return {
    ...o,
    waitForReplicas:
      wait && wait.replicas > 0 ? { replicas: wait.replicas, timeoutMs: wait.timeoutMs } : undefined,
  }
}
