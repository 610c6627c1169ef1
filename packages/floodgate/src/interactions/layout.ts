import { integerIn } from '../validation/index.js'
import { INTERACTION_DEFAULTS } from './defaults.js'
import { InteractionKeys } from './keys.js'
import { type InteractionTables, type InteractionTablesOptions, resolveTables } from './tables.js'

/**
 * What the write path ({@link Interactions}), the flush (`createInteractionFlush`), the counts
 * reader and recovery (`CountsReader`, `CountsRecovery`) and the rankings (`createRankings`) must
 * agree on. Build it once with {@link interactionLayout} and spread it into each one's options
 * (`{ ...layout, … }`): they take these fields under the same names.
 */
export interface InteractionLayout {
  /** Key prefix, e.g. the service's `REDIS_PREFIX`. */
  readonly prefix: string
  /** Partitions P (item i in partition `i mod P`). */
  readonly partitions: number
  /** Entries kept per partition in the all-time ranking ZSETs. */
  readonly topK: number
  /** PostgreSQL tables and columns the flush writes and the recovery reads. */
  readonly tables: Readonly<InteractionTables>
}

export interface InteractionLayoutOptions {
  /** Key prefix. Required. */
  prefix: string
  /** @default 300 ({@link INTERACTION_DEFAULTS}: with 3, 6, 10, 30 or 100 masters each serves an equal share) */
  partitions?: number
  /** @default 1000 ({@link INTERACTION_DEFAULTS}) */
  topK?: number
  /**
   * The counted item's table and columns, and the interaction tables; fields left out keep
   * their default, e.g. `{ items: { table: 'articles', id: 'article_id' }, itemIdColumn: 'article_id' }`.
   * @default {@link defaultInteractionTables} (`items`, `item_likes`, …)
   */
  tables?: InteractionTablesOptions
}

/**
 * The layout with defaults applied and every field checked once.
 * @throws {InvalidArgumentError} naming the field: an empty prefix, partitions outside [1, 16384],
 *   topK outside [1, 100000], a table or column name that is not a lower-case identifier
 *   (tables: optionally `schema.table`).
 */
export function interactionLayout(options: InteractionLayoutOptions): InteractionLayout {
  const partitions = options.partitions ?? INTERACTION_DEFAULTS.partitions
  new InteractionKeys(options.prefix, partitions) // checks the prefix and the partitions
  const topK = integerIn('topK', options.topK ?? INTERACTION_DEFAULTS.topK, 1, 100_000)
  const tables = resolveTables(options.tables)
  return Object.freeze({ prefix: options.prefix, partitions, topK, tables })
}
