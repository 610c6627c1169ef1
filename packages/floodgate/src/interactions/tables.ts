import { InvalidArgumentError } from '../errors/index.js'

/**
 * The counted item's table (default `items`; video-api passes `videos`): a bigint id column and
 * the three count columns the flush moves and the recovery reads.
 */
export interface ItemTable {
  /** Table name, optionally `schema.table`. @default 'items' */
  table: string
  /** Its bigint primary key column. @default 'id' */
  id: string
  /** Count columns (bigint): the flush adds the detail rows inserted minus deleted. @default 'like_count' */
  likeCount: string
  /** @default 'favorite_count' */
  favoriteCount: string
  /** @default 'play_count' */
  playCount: string
  /**
   * A nullable column set when the item is deleted (video-api: `deleted_at`): the rebuild, a
   * recovery's restore and reconcile leave such items out (their state left Redis with
   * `Interactions.forget`; their rows stay). @default none: every item is live
   */
  deletedAt?: string
}

/**
 * Where the interactions live in PostgreSQL. The detail tables and the watermarks hold the item
 * id in `itemIdColumn`; their other columns are fixed (see {@link interactionSchemaSql}).
 */
export interface InteractionTables {
  /** The counted item's table. */
  items: ItemTable
  /** The item id column of `likes`, `favorites`, `plays` and `watermarks`. @default 'item_id' */
  itemIdColumn: string
  /** Like rows `(itemIdColumn, user_id, created_at)`. @default 'item_likes' */
  likes: string
  /** Favourite rows, same columns. @default 'item_favorites' */
  favorites: string
  /** Play log `(event_id, itemIdColumn, viewer, played_at)`. @default 'item_plays' */
  plays: string
  /** Last applied event per (kind, item, user). @default 'interaction_watermarks' */
  watermarks: string
}

/** What the options take: any field may be left out (its default applies). */
export type InteractionTablesOptions = Partial<Omit<InteractionTables, 'items'>> & {
  items?: Partial<ItemTable>
}

/**
 * The defaults, named after no particular item: `items(id, like_count, …)`, `item_likes(item_id, …)`,
 * `item_favorites`, `item_plays`, `interaction_watermarks`. An application with its own names
 * (video-api: `videos`, `video_likes(video_id, …)`) passes them in full.
 */
export const defaultInteractionTables: Readonly<InteractionTables> = Object.freeze({
  items: Object.freeze({
    table: 'items',
    id: 'id',
    likeCount: 'like_count',
    favoriteCount: 'favorite_count',
    playCount: 'play_count',
  }),
  itemIdColumn: 'item_id',
  likes: 'item_likes',
  favorites: 'item_favorites',
  plays: 'item_plays',
  watermarks: 'interaction_watermarks',
})

/** Every name as a quoted SQL identifier, plus the bare names index names are made of. */
export interface QuotedTables {
  items: Record<Exclude<keyof ItemTable, 'deletedAt'>, string> & { deletedAt: string | undefined }
  itemIdColumn: string
  likes: string
  favorites: string
  plays: string
  watermarks: string
  bare: { likes: string; favorites: string; plays: string; itemIdColumn: string }
}

/**
 * Defaults applied, every name checked, frozen.
 * @throws {InvalidArgumentError} naming the field (`tables.likes`, `tables.items.id`, …) for a
 *   name that is not a lower-case identifier (`[a-z_][a-z0-9_]*`, at most 63 characters) or,
 *   for a table, `schema.table`.
 */
export function resolveTables(tables: InteractionTablesOptions = {}): Readonly<InteractionTables> {
  const d = defaultInteractionTables
  const resolved: InteractionTables = {
    ...d,
    ...tables,
    items: Object.freeze({ ...d.items, ...tables.items }),
  }
  quoteTables(resolved)
  return Object.freeze(resolved)
}

/** The names of `tables` quoted for SQL text. @throws {InvalidArgumentError} as {@link resolveTables}. */
export function quoteTables(tables: InteractionTables): QuotedTables {
  const { items } = tables
  return {
    items: {
      table: quote('tables.items.table', items.table, true),
      id: quote('tables.items.id', items.id, false),
      likeCount: quote('tables.items.likeCount', items.likeCount, false),
      favoriteCount: quote('tables.items.favoriteCount', items.favoriteCount, false),
      playCount: quote('tables.items.playCount', items.playCount, false),
      deletedAt:
        items.deletedAt === undefined ? undefined : quote('tables.items.deletedAt', items.deletedAt, false),
    },
    itemIdColumn: quote('tables.itemIdColumn', tables.itemIdColumn, false),
    likes: quote('tables.likes', tables.likes, true),
    favorites: quote('tables.favorites', tables.favorites, true),
    plays: quote('tables.plays', tables.plays, true),
    watermarks: quote('tables.watermarks', tables.watermarks, true),
    bare: {
      likes: lastPart(tables.likes),
      favorites: lastPart(tables.favorites),
      plays: lastPart(tables.plays),
      itemIdColumn: tables.itemIdColumn,
    },
  }
}

// Lower case only: a quoted "Items" would not match a table created as Items (folded to items).
const IDENT = /^[a-z_][a-z0-9_]{0,62}$/

function quote(field: string, name: string, qualified: boolean): string {
  const parts = typeof name === 'string' ? name.split('.') : []
  if (parts.length === 0 || parts.length > (qualified ? 2 : 1) || !parts.every((p) => IDENT.test(p))) {
    const shape = qualified ? 'a lower-case identifier or schema.table' : 'a lower-case identifier'
    throw new InvalidArgumentError(field, `must be ${shape}, got ${JSON.stringify(name)}`)
  }
  return parts.map((p) => `"${p}"`).join('.')
}

function lastPart(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1)
}

/** SQL that is true for a live item of alias `v` (`AND v."deleted_at" IS NULL`), or '' without `deletedAt`. */
export function liveItem(tables: QuotedTables, alias: string): string {
  return tables.items.deletedAt === undefined ? '' : ` AND ${alias}.${tables.items.deletedAt} IS NULL`
}
