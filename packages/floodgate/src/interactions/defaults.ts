/** Defaults of the interaction layout ({@link interactionLayout}) and write path ({@link Interactions}). */
export const INTERACTION_DEFAULTS = {
  partitions: 16,
  topK: 1000,
  playDedupeWindowMs: 600_000,
  bucketTtlMs: 24 * 3_600_000 + 600_000,
} as const
