import { MEMBER_BUCKET_DEFAULTS } from '../interactions/defaults.js'
import { awaitFlushesInFlight } from '../interactions/flush_fence.js'
import type { InteractionKeys, MemberKind } from '../interactions/keys.js'
import { dropMembers, readGeometry } from '../interactions/member_buckets.js'
import { liveItem, type QuotedTables } from '../interactions/tables.js'
import { toMember } from '../rankings/member.js'
import type { RedisClient } from '../redis/index.js'
import type { SqlExecutor } from '../sql/executor.js'
import { forEachBounded } from './bounded.js'
import { guardSql, RebuildAbortedError } from './errors.js'
import { RECOVERY_DEFAULTS } from './recovery_defaults.js'
import { MARKER_TTL_MS, restoredKey } from './restore_markers.js'
import {
  restoreMembersReply,
  restoreMembersScript,
  restorePlaysReply,
  restorePlaysScript,
} from './scripts.js'

/**
 * `merge`: after a data loss. Sets get the DB members added (SADD: a membership
 * written since the loss is never dropped), play counters become
 * max(counter, DB count). Idempotent, so a retried or concurrent rebuild is harmless.
 * `replace`: an admin repair on a drained stream. Sets and counters are made
 * equal to the DB (sets are replaced per item, counters set).
 */
export type RebuildMode = 'merge' | 'replace'

/** What a rebuild wrote. */
export interface RebuildReport {
  mode: RebuildMode
  /** Rows read from the like and favourite tables. */
  likeRows: number
  favoriteRows: number
  /** Items whose play counter was restored. */
  playItems: number
  durationMs: number
}

/** Inputs of {@link rebuildFromDatabase}. */
export interface RebuildInput {
  redis: RedisClient
  sql: SqlExecutor
  keys: InteractionKeys
  tables: QuotedTables
  topK: number
  /** Rows per keyset page (rows). */
  chunkSize: number
  /**
   * Most Lua steps awaiting their reply at once (calls), so the request path's commands on the
   * same Redis interleave with the rebuild's. @default 16 (`RECOVERY_DEFAULTS.stepsInFlight`)
   */
  stepsInFlight?: number
  mode: RebuildMode
  /** Aborted when the rebuild lock is lost; checked between chunks. */
  signal?: AbortSignal
}

interface MemberRow {
  item_id: string
  user_id: string
}

/**
 * Rebuilds like/favourite buckets, play counters and the all-time rankings from
 * PostgreSQL, chunk by chunk (keyset pagination, `chunkSize` rows per page) with
 * Lua steps of at most `maxMembersPerStep` (250) members per item per page, at most
 * `stepsInFlight` (16) awaiting their reply at once; `replace` first drops each item's buckets in bounded UNLINKs ({@link dropMembers}). Minute buckets
 * are not rebuilt: trending windows refill from live events. Reads start once no flush
 * transaction holds the flush fence (`interactions/flush_fence.ts`).
 * @throws {RebuildAbortedError} when `signal` aborts. @throws {CountersDatabaseError} when a query fails.
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function rebuildFromDatabase(input: RebuildInput): Promise<RebuildReport> {
  const started = Date.now()
  await guardSql('wait for the flush fence', () => awaitFlushesInFlight(input.sql, input.keys))
  const likeRows = await restoreMemberTable(input, 'likes')
  const favoriteRows = await restoreMemberTable(input, 'favorites')
  const playItems = await restorePlayCounters(input)
  return { mode: input.mode, likeRows, favoriteRows, playItems, durationMs: Date.now() - started }
}

function inFlight(input: RebuildInput): number {
  return input.stepsInFlight ?? RECOVERY_DEFAULTS.stepsInFlight
}

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RebuildAbortedError('rebuild lock lost', { cause: signal.reason })
}

/**
 * What one restore step does (see restore-members-4.lua): `merge` adds the members of the item's
 * last chunk and records its marker, `merge-part` adds an earlier chunk's (both: nothing once the
 * marker is there), `add` adds with no marker (a `replace` after {@link dropMembers}).
 */
export type RestoreStep = 'merge' | 'merge-part' | 'add'

/**
 * Restores one item's members of one kind, in Lua steps of at most `maxMembersPerStep` (250)
 * members each. With `merge`, every step but the last is `merge-part` and the last one `merge`
 * (records the marker), unless `final` is false (more members follow in a later call).
 * @returns whether it restored (false: already restored since the loss) and the count after.
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function restoreMembersOf(
  input: Pick<RebuildInput, 'redis' | 'keys' | 'topK'>,
  kind: MemberKind,
  itemId: string,
  users: readonly string[],
  step: RestoreStep,
  final = true,
): Promise<{ restored: boolean; count: number }> {
  const max = MEMBER_BUCKET_DEFAULTS.maxMembersPerStep
  let out = { restored: false, count: 0 }
  for (let i = 0; i === 0 || i < users.length; i += max) {
    const last = i + max >= users.length
    const mode = step === 'merge' && !(last && final) ? 'merge-part' : step
    out = await restoreStep(input, kind, itemId, users.slice(i, i + max), mode)
    if (!out.restored) return out // the marker is there: the item was restored already
  }
  return out
}

async function restoreStep(
  input: Pick<RebuildInput, 'redis' | 'keys' | 'topK'>,
  kind: MemberKind,
  itemId: string,
  users: readonly string[],
  mode: RestoreStep,
): Promise<{ restored: boolean; count: number }> {
  const p = input.keys.partitionOf(itemId)
  const reply = await restoreMembersScript.run(
    input.redis,
    [
      input.keys.members(kind, itemId),
      input.keys.rankAll(p, 'likes'),
      restoredKey(input.keys, p),
      input.keys.gone(itemId),
    ],
    [
      toMember(itemId),
      input.topK,
      kind === 'likes' ? '1' : '0',
      mode,
      `${kind}:${itemId}`,
      MARKER_TTL_MS,
      MEMBER_BUCKET_DEFAULTS.bucketLoad,
      ...users,
    ],
  )
  return restoreMembersReply(reply)
}

async function restoreMemberTable(input: RebuildInput, kind: MemberKind): Promise<number> {
  const table = kind === 'likes' ? input.tables.likes : input.tables.favorites
  const c = input.tables.itemIdColumn
  // ORDER BY the qualified bigint columns: a bare name would bind to the text alias and sort "100" before "37".
  const { items } = input.tables
  // a deleted item's rows stay in the database, its state does not come back to Redis
  const live =
    items.deletedAt === undefined
      ? ''
      : ` AND NOT EXISTS (SELECT 1 FROM ${items.table} v WHERE v.${items.id} = t.${c} AND v.${items.deletedAt} IS NOT NULL)`
  const text = `SELECT t.${c}::text AS item_id, t.user_id::text AS user_id FROM ${table} t
    WHERE (t.${c}, t.user_id) > ($1::bigint, $2::bigint)${live} ORDER BY t.${c}, t.user_id LIMIT $3`
  let after: [string, string] = ['0', '0']
  let total = 0
  // Each page's rows of an item go out at once, in steps of at most maxMembersPerStep members. The
  // last item of a page may continue on the next page: it stays `open` (merge: no marker yet)
  // until a page starts with another item or the table ends.
  let open: string | undefined
  const step: RestoreStep = input.mode === 'merge' ? 'merge' : 'add'
  for (;;) {
    checkSignal(input.signal)
    const { rows } = await guardSql(`read ${kind}`, () =>
      input.sql.query<MemberRow>(text, [after[0], after[1], input.chunkSize]),
    )
    const complete = rows.length < input.chunkSize
    const groups: { itemId: string; users: string[] }[] = []
    for (const row of rows) {
      const last = groups[groups.length - 1]
      if (last && last.itemId === row.item_id) last.users.push(row.user_id)
      else groups.push({ itemId: row.item_id, users: [row.user_id] })
    }
    if (open !== undefined && groups[0]?.itemId !== open && step === 'merge')
      await restoreMembersOf(input, kind, open, [], 'merge')
    const continued = open
    open = complete ? undefined : groups[groups.length - 1]?.itemId
    // one item's steps run one after another, so at most stepsInFlight calls await Redis
    await forEachBounded(groups, inFlight(input), async (g) => {
      if (input.mode === 'replace' && g.itemId !== continued)
        await dropMembers(input.redis, input.keys, kind, g.itemId)
      return restoreMembersOf(input, kind, g.itemId, g.users, step, g.itemId !== open)
    })
    total += rows.length
    if (complete) return total
    const last = rows[rows.length - 1]!
    after = [last.item_id, last.user_id]
  }
}

async function restorePlayCounters(input: RebuildInput): Promise<number> {
  const { table, id, playCount } = input.tables.items
  const text = `SELECT v.${id}::text AS id, v.${playCount}::text AS play_count FROM ${table} v
    WHERE v.${id} > $1::bigint AND ($2::boolean OR v.${playCount} > 0)${liveItem(input.tables, 'v')}
    ORDER BY v.${id} LIMIT $3`
  let after = '0'
  let total = 0
  for (;;) {
    checkSignal(input.signal)
    const { rows } = await guardSql('read play counts', () =>
      input.sql.query<{ id: string; play_count: string }>(text, [
        after,
        input.mode === 'replace',
        input.chunkSize,
      ]),
    )
    if (rows.length === 0) return total
    await forEachBounded(rows, inFlight(input), async (row) => {
      const p = input.keys.partitionOf(row.id)
      const reply = await restorePlaysScript.run(
        input.redis,
        [input.keys.plays(row.id), input.keys.rankAll(p, 'plays'), input.keys.gone(row.id)],
        [toMember(row.id), row.play_count, input.topK, input.mode],
      )
      restorePlaysReply(reply)
    })
    total += rows.length
    after = rows[rows.length - 1]!.id
    if (rows.length < input.chunkSize) return total
  }
}

/**
 * Restores one item (both sets, merge; its play counter, max) from the DB, at most once
 * per recovery (restore markers): what a toggle runs first while a rebuild is in progress,
 * so an unlike of a like the rebuild has not reached yet finds the member and produces
 * its event, and a later toggle is never undone by a second restore from a lagging DB.
 * @returns the counts after the restore (or as they are, if already restored).
 * @throws {CountersDatabaseError} when a query fails. @throws {StoreUnavailableError} when Redis fails.
 */
export async function restoreOneItem(
  input: Omit<RebuildInput, 'chunkSize' | 'mode' | 'signal'>,
  itemId: string,
): Promise<{ likes: number; favorites: number; plays: number }> {
  const p = input.keys.partitionOf(itemId)
  const marks = await input.redis.hmget(restoredKey(input.keys, p), `likes:${itemId}`, `favorites:${itemId}`)
  if (marks[0] !== null && marks[1] !== null) {
    const [likes, favorites, plays] = await Promise.all([
      countOf(input, 'likes', itemId),
      countOf(input, 'favorites', itemId),
      input.redis.get(input.keys.plays(itemId)),
    ])
    return { likes, favorites, plays: Number(plays ?? 0) }
  }
  await guardSql('wait for the flush fence', () => awaitFlushesInFlight(input.sql, input.keys))
  const t = input.tables
  const gone = t.items.deletedAt === undefined ? 'false' : `v.${t.items.deletedAt} IS NOT NULL`
  const { rows } = await guardSql('read one item', () =>
    input.sql.query<{ plays: string; gone: boolean }>(
      `SELECT v.${t.items.playCount}::text AS plays, ${gone} AS gone FROM ${t.items.table} v WHERE v.${t.items.id} = $1::bigint`,
      [itemId],
    ),
  )
  const out = { likes: 0, favorites: 0, plays: 0 }
  if (rows[0]?.gone === true) return out // deleted (tables.items.deletedAt): nothing comes back
  if (rows[0] !== undefined) {
    const reply = await restorePlaysScript.run(
      input.redis,
      [input.keys.plays(itemId), input.keys.rankAll(p, 'plays'), input.keys.gone(itemId)],
      [toMember(itemId), rows[0].plays, input.topK, 'merge'],
    )
    out.plays = restorePlaysReply(reply)
  }
  out.likes = await restoreItemMembers(input, 'likes', itemId)
  out.favorites = await restoreItemMembers(input, 'favorites', itemId)
  return out
}

/** The count a read serves: the meta's `n`, or SCARD of the one bucket. */
async function countOf(input: Pick<RebuildInput, 'redis' | 'keys'>, kind: MemberKind, itemId: string) {
  const geometry = await readGeometry(input.redis, input.keys, kind, itemId)
  return geometry.count ?? input.redis.scard(input.keys.members(kind, itemId))
}

/**
 * One item's members of `kind` from the DB (keyset pages of `maxMembersPerStep` rows by user id),
 * each page one `merge-part` step, the last one `merge`; stops at the first step that finds the
 * marker (restored by someone else meanwhile). @returns the count after.
 */
async function restoreItemMembers(
  input: Omit<RebuildInput, 'chunkSize' | 'mode' | 'signal'>,
  kind: MemberKind,
  itemId: string,
): Promise<number> {
  const table = kind === 'likes' ? input.tables.likes : input.tables.favorites
  const c = input.tables.itemIdColumn
  const max = MEMBER_BUCKET_DEFAULTS.maxMembersPerStep
  const text = `SELECT t.user_id::text AS user_id FROM ${table} t
    WHERE t.${c} = $1::bigint AND t.user_id > $2::bigint ORDER BY t.user_id LIMIT $3`
  let after = '0'
  for (;;) {
    const { rows } = await guardSql(`read one item's ${kind}`, () =>
      input.sql.query<{ user_id: string }>(text, [itemId, after, max]),
    )
    const last = rows.length < max
    const step = await restoreMembersOf(
      input,
      kind,
      itemId,
      rows.map((r) => r.user_id),
      'merge',
      last,
    )
    if (last || !step.restored) return step.count
    after = rows[rows.length - 1]!.user_id
  }
}
