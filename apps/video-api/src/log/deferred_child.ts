import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type { Bindings, ChildLoggerOptions } from 'pino'

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
type Level = (typeof LEVELS)[number]

// the level methods, defined on the prototype in the class's static block
export interface DeferredChildLogger extends Pick<FastifyBaseLogger, Level> {}

/**
 * A request's logger (`request.log`, `reply.log`) that builds its pino child (parent + the
 * `reqId` binding) only when something logs through it. Most requests log nothing but their one
 * request line, which can go through the parent ({@link DeferredChildLogger.parentWhileUnused})
 * with the bindings as the first fields: the same bytes as through the child (pino writes a
 * child's bindings right before the logged fields), without a pino child per request.
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the level methods are set in the static block
export class DeferredChildLogger implements FastifyBaseLogger {
  private built: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
  ) {}

  /** The pino child, built on first use. */
  private child_(): FastifyBaseLogger {
    this.built ??= this.parent.child(this.bindings)
    return this.built
  }

  /**
   * The parent while no child was built: a caller that writes the bindings' fields first, then
   * its own, through it writes the child's line without building the child. `undefined` once built.
   */
  parentWhileUnused(): FastifyBaseLogger | undefined {
    return this.built === undefined ? this.parent : undefined
  }

  get level(): string {
    return (this.built ?? this.parent).level
  }
  set level(level: string) {
    this.child_().level = level
  }

  // one prototype method per level (not per-instance closures: the point is to allocate little)
  static {
    for (const level of LEVELS) {
      Object.defineProperty(DeferredChildLogger.prototype, level, {
        value(this: DeferredChildLogger, ...args: unknown[]) {
          const child = this.child_()
          ;(child[level] as (...args: unknown[]) => void).apply(child, args)
        },
        writable: true,
        configurable: true,
      })
    }
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.child_().child(bindings, options)
  }
}

/**
 * Fastify `childLoggerFactory`: a {@link DeferredChildLogger} per request. A route with its own
 * `logLevel` or `logSerializers` gets pino's child at once, as Fastify's default factory does.
 */
export const deferredChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (
  logger,
  bindings,
  options,
) =>
  // Fastify passes only these two options, for a route that sets them
  options.level !== undefined || options.serializers !== undefined
    ? logger.child(bindings, options)
    : new DeferredChildLogger(logger, bindings)
