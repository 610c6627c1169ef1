/**
 * Structured context of a log line. Always has `primitive` (`cache`, `rateLimiter`, `mutex`,
 * `bloomFilter`, `bloomReplica`, `streamConsumer`, `countsRecovery`) and the primitive's name
 * field (`cache`, `policy`, `lock`, `filter`, `group`); an error goes in `err` (pino's key).
 */
export type LogFields = { primitive: string } & Record<string, unknown>

/**
 * The one logger type every floodgate primitive accepts, the same way: option `logger`. A subset
 * of pino's API, so a pino or Fastify logger (`app.log`) fits as is; for `console`, pass
 * `{ warn: (f, m) => console.warn(m, f), error: (f, m) => console.error(m, f) }`.
 * Primitives log only what needs a human; counts go to events and metrics.
 * - `warn`: degraded but handled (a limiter answering without Redis, a Bloom gate failing open, a
 *   lost lease, a failed background refresh, a consumer retrying a batch);
 * - `error`: work given up (an invalidation or namespace clear that could not reach Redis after
 *   its retries, a dead-letter write or a counters rebuild that failed).
 */
export interface Logger {
  /** `fields`: structured context; `message`: one line of text. */
  warn(fields: LogFields, message: string): void
  /** Same shape as {@link Logger.warn}; without it, `error` lines go to `warn`. */
  error?(fields: LogFields, message: string): void
}

/** Logs at `error`, or at `warn` when the logger has no `error` method; no-op without a logger. */
export function logError(logger: Logger | undefined, fields: LogFields, message: string): void {
  if (logger === undefined) return
  if (logger.error !== undefined) logger.error(fields, message)
  else logger.warn(fields, message)
}

/** @deprecated the former name of {@link Logger} (same type). */
export type FloodgateLogger = Logger
