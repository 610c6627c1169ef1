/**
 * The logger every floodgate primitive accepts (option `logger`): pino-shaped, so a pino or
 * Fastify logger fits as is; `console`-like loggers need a one-line adapter. Primitives log only
 * what needs a human (a limiter answering without Redis, say); counts go to events and metrics.
 */
export interface FloodgateLogger {
  /** `fields`: structured context (always has `primitive`); `message`: one line of text. */
  warn(fields: Record<string, unknown>, message: string): void
}
