import { awaitFlushesInFlight } from '../interactions/flush_fence.js'
import type { InteractionKeys } from '../interactions/keys.js'
import type { QuotedTables } from '../interactions/tables.js'
import { toMember } from '../rankings/member.js'
import type { RedisClient } from '../redis/index.js'
import type { SqlExecutor } from '../sql/executor.js'
import { guardSql, RebuildAbortedError } from './errors.js'
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
  /** Rows per keyset page (and per pipelined batch of Lua steps). */
  chunkSize: number
  mode: RebuildMode
  /** Aborted when the rebuild lock is lost; checked between chunks. */
  signal?: AbortSignal
}

interface MemberRow {
  item_id: string
  user_id: string
}

/**
 * Rebuilds like/favourite sets, play counters and the all-time rankings from
 * PostgreSQL, chunk by chunk (keyset pagination, `chunkSize` rows per page) with
 * one Lua step per item per page sent in one pipelined burst. Minute buckets
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

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RebuildAbortedError('rebuild lock lost', { cause: signal.reason })
}

/**
 * Restores one item's members of one kind: one Lua step (see restore-members-3.lua).
 * @returns whether it restored (false: already restored since the loss) and the SCARD after.
 */
export async function restoreMembersOf(
  input: Pick<RebuildInput, 'redis' | 'keys' | 'topK'>,
  kind: 'likes' | 'favorites',
  itemId: string,
  users: readonly string[],
  mode: RebuildMode,
): Promise<{ restored: boolean; count: number }> {
  const p = input.keys.partitionOf(itemId)
  const setKey = kind === 'likes' ? input.keys.likes(itemId) : input.keys.favorites(itemId)
  const reply = await restoreMembersScript.run(
    input.redis,
    [setKey, input.keys.rankAll(p, 'likes'), restoredKey(input.keys, p)],
    [
      toMember(itemId),
      input.topK,
      kind === 'likes' ? '1' : '0',
      mode,
      `${kind}:${itemId}`,
      MARKER_TTL_MS,
      ...users,
    ],
  )
  return restoreMembersReply(reply)
}

async function restoreMemberTable(input: RebuildInput, kind: 'likes' | 'favorites'): Promise<number> {
  const table = kind === 'likes' ? input.tables.likes : input.tables.favorites
  const c = input.tables.itemIdColumn
  // ORDER BY the qualified bigint columns: a bare name would bind to the text alias and sort "100" before "37".
  const text = `SELECT t.${c}::text AS item_id, t.user_id::text AS user_id FROM ${table} t
    WHERE (t.${c}, t.user_id) > ($1::bigint, $2::bigint) ORDER BY t.${c}, t.user_id LIMIT $3`
  let after: [string, string] = ['0', '0']
  let total = 0
  // Each item is restored in ONE Lua step with all its members: the rows of the last item of a
  // page may continue on the next page, so they are carried over until the item is complete.
  let carried: { itemId: string; users: string[] } | undefined
  for (;;) {
    checkSignal(input.signal)
    const { rows } = await guardSql(`read ${kind}`, () =>
      input.sql.query<MemberRow>(text, [after[0], after[1], input.chunkSize]),
    )
    const complete = rows.length < input.chunkSize
    const groups: { itemId: string; users: string[] }[] = carried ? [carried] : []
    for (const row of rows) {
      const last = groups[groups.length - 1]
      if (last && last.itemId === row.item_id) last.users.push(row.user_id)
      else groups.push({ itemId: row.item_id, users: [row.user_id] })
    }
    carried = complete ? undefined : groups.pop()
    await Promise.all(groups.map((g) => restoreMembersOf(input, kind, g.itemId, g.users, input.mode)))
    total += rows.length
    if (complete) return total
    const last = rows[rows.length - 1]!
    after = [last.item_id, last.user_id]
  }
}

async function restorePlayCounters(input: RebuildInput): Promise<number> {
  const { table, id, playCount } = input.tables.items
  const text = `SELECT v.${id}::text AS id, v.${playCount}::text AS play_count FROM ${table} v
    WHERE v.${id} > $1::bigint AND ($2::boolean OR v.${playCount} > 0) ORDER BY v.${id} LIMIT $3`
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
    await Promise.all(
      rows.map(async (row) => {
        const p = input.keys.partitionOf(row.id)
        const reply = await restorePlaysScript.run(
          input.redis,
          [input.keys.plays(row.id), input.keys.rankAll(p, 'plays')],
          [toMember(row.id), row.play_count, input.topK, input.mode],
        )
        restorePlaysReply(reply)
      }),
    )
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
      input.redis.scard(input.keys.likes(itemId)),
      input.redis.scard(input.keys.favorites(itemId)),
      input.redis.get(input.keys.plays(itemId)),
    ])
    return { likes, favorites, plays: Number(plays ?? 0) }
  }
  await guardSql('wait for the flush fence', () => awaitFlushesInFlight(input.sql, input.keys))
  const t = input.tables
  const c = t.itemIdColumn
  const { rows } = await guardSql('read one item', () =>
    input.sql.query<{ kind: string; users: string[] | null; plays: string | null }>(
      `SELECT 'likes' AS kind, array_agg(l.user_id::text) AS users, NULL AS plays FROM ${t.likes} l WHERE l.${c} = $1::bigint
       UNION ALL SELECT 'favorites', array_agg(f.user_id::text), NULL FROM ${t.favorites} f WHERE f.${c} = $1::bigint
       UNION ALL SELECT 'plays', NULL, v.${t.items.playCount}::text FROM ${t.items.table} v WHERE v.${t.items.id} = $1::bigint`,
      [itemId],
    ),
  )
  const out = { likes: 0, favorites: 0, plays: 0 }
  for (const row of rows) {
    if (row.kind === 'plays') {
      const reply = await restorePlaysScript.run(
        input.redis,
        [input.keys.plays(itemId), input.keys.rankAll(p, 'plays')],
        [toMember(itemId), row.plays ?? '0', input.topK, 'merge'],
      )
      out.plays = restorePlaysReply(reply)
    } else {
      const kind = row.kind === 'likes' ? 'likes' : 'favorites'
      out[kind] = (await restoreMembersOf(input, kind, itemId, row.users ?? [], 'merge')).count
    }
  }
  return out
}
