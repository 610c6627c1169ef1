import { integerIn } from '../validation/index.js'
import { InteractionKeys } from './keys.js'
import { interactionDefaults } from './options.js'
import { defaultFlushTables, type FlushTables, quoteFlushTables } from './tables.js'

/**
 * What the write path ({@link Interactions}), the flush (`createInteractionFlush`), the counts
 * reader and recovery (`CountsReader`, `CountsRecovery`) and the rankings (`createRankings`) must
 * agree on. Build it once with {@link interactionLayout} and spread it into each one's options
 * (`{ ...layout, … }`): they take these fields under the same names.
 */
export interface InteractionLayout {
  /** Key prefix, e.g. the service's `REDIS_PREFIX`. */
  readonly prefix: string
  /** Partitions P (video v in partition `v mod P`). */
  readonly partitions: number
  /** Entries kept per partition in the all-time ranking ZSETs. */
  readonly topK: number
  /** PostgreSQL tables the flush writes and the recovery reads. */
  readonly tables: Readonly<FlushTables>
}

export interface InteractionLayoutOptions {
  /** Key prefix. Required. */
  prefix: string
  /** @default 16 ({@link interactionDefaults}) */
  partitions?: number
  /** @default 1000 ({@link interactionDefaults}) */
  topK?: number
  /** @default {@link defaultFlushTables} */
  tables?: Partial<FlushTables>
}

/**
 * The layout with defaults applied and every field checked once.
 * @throws {InvalidArgumentError} naming the field: an empty prefix, partitions outside [1, 16384],
 *   topK outside [1, 100000], a table name that is not `[schema.]identifier`.
 */
export function interactionLayout(options: InteractionLayoutOptions): InteractionLayout {
  const partitions = options.partitions ?? interactionDefaults.partitions
  new InteractionKeys(options.prefix, partitions) // checks the prefix and the partitions
  const topK = integerIn('topK', options.topK ?? interactionDefaults.topK, 1, 100_000)
  quoteFlushTables(options.tables)
  const tables = Object.freeze({ ...defaultFlushTables, ...options.tables })
  return Object.freeze({ prefix: options.prefix, partitions, topK, tables })
}
