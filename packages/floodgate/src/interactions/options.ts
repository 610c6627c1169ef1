import { InvalidArgumentError } from '../errors/index.js'

/** Options of the interaction write path ({@link Interactions}). */
export interface InteractionOptions {
  /** Key prefix, e.g. the service's `REDIS_PREFIX`. Required. */
  prefix: string
  /**
   * Number of partitions P; video v lives in partition `v mod P` (hash tag `{ix:<p>}`).
   * @default 16
   */
  partitions?: number
  /**
   * Entries kept in each partition's all-time ranking ZSET (top K per partition).
   * @default 1000
   */
  topK?: number
  /**
   * Play dedupe window (ms): one viewer's plays of one video inside it count once.
   * @default 600000 (10 min)
   */
  playDedupeWindowMs?: number
  /**
   * TTL (ms) of a per-minute ranking bucket: the longest window (24 h) plus a margin (10 min).
   * @default 87000000
   */
  bucketTtlMs?: number
}

export type ResolvedInteractionOptions = Required<InteractionOptions>

export const interactionDefaults = {
  partitions: 16,
  topK: 1000,
  playDedupeWindowMs: 600_000,
  bucketTtlMs: 24 * 3_600_000 + 600_000,
} as const

/** Applies defaults and checks ranges. @throws {InvalidArgumentError} naming the field. */
export function resolveInteractionOptions(options: InteractionOptions): ResolvedInteractionOptions {
  const o = { ...interactionDefaults, ...options }
  positiveInteger('partitions', o.partitions)
  positiveInteger('topK', o.topK)
  positiveInteger('playDedupeWindowMs', o.playDedupeWindowMs)
  positiveInteger('bucketTtlMs', o.bucketTtlMs)
  return o
}

export function positiveInteger(field: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError(field, `must be a positive integer, got ${value}`)
  }
}
