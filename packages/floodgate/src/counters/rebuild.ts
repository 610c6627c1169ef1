import { ScriptContractError } from '../errors/index.js'
import type { InteractionKeys } from '../interactions/keys.js'
import { toMember } from '../rankings/member.js'
import { LuaScript, type RedisClient } from '../redis/index.js'
import type { SqlExecutor } from '../sql/executor.js'
import { guardSql, RebuildAbortedError } from './errors.js'
import type { QuotedTables } from './tables.js'

const restoreMembers = new LuaScript(new URL('./lua/restore-members-2.lua', import.meta.url))
const restorePlays = new LuaScript(new URL('./lua/restore-plays-2.lua', import.meta.url))

/**
 * `merge`: after a data loss. Sets get the DB members added (SADD: a membership
 * written since the loss is never dropped), play counters become
 * max(counter, DB count). Idempotent, so a retried or concurrent rebuild is harmless.
 * `replace`: an admin repair on a drained stream. Sets and counters are made
 * equal to the DB (sets are replaced per video, counters set).
 */
export type RebuildMode = 'merge' | 'replace'

/** What a rebuild wrote. */
export interface RebuildReport {
  mode: RebuildMode
  /** Rows read from the like and favourite tables. */
  likeRows: number
  favoriteRows: number
  /** Videos whose play counter was restored. */
  playVideos: number
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
  video_id: string
  user_id: string
}

/**
 * Rebuilds like/favourite sets, play counters and the all-time rankings from
 * PostgreSQL, chunk by chunk (keyset pagination, `chunkSize` rows per page) with
 * one Lua step per video per page sent in one pipelined burst. Minute buckets
 * are not rebuilt: trending windows refill from live events.
 * @throws {RebuildAbortedError} when `signal` aborts. @throws {CountersDatabaseError} when a query fails.
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function rebuildFromDatabase(input: RebuildInput): Promise<RebuildReport> {
  const started = Date.now()
  const likeRows = await restoreMemberTable(input, 'likes')
  const favoriteRows = await restoreMemberTable(input, 'favorites')
  const playVideos = await restorePlayCounters(input)
  return { mode: input.mode, likeRows, favoriteRows, playVideos, durationMs: Date.now() - started }
}

function checkSignal(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new RebuildAbortedError('rebuild lock lost', { cause: signal.reason })
}

async function restoreMemberTable(input: RebuildInput, kind: 'likes' | 'favorites'): Promise<number> {
  const table = kind === 'likes' ? input.tables.likes : input.tables.favorites
  // ORDER BY the qualified bigint columns: a bare name would bind to the text alias and sort "100" before "37".
  const text = `SELECT t.video_id::text AS video_id, t.user_id::text AS user_id FROM ${table} t
    WHERE (t.video_id, t.user_id) > ($1::bigint, $2::bigint) ORDER BY t.video_id, t.user_id LIMIT $3`
  let after: [string, string] = ['0', '0']
  let total = 0
  for (;;) {
    checkSignal(input.signal)
    const { rows } = await guardSql(`read ${kind}`, () =>
      input.sql.query<MemberRow>(text, [after[0], after[1], input.chunkSize]),
    )
    if (rows.length === 0) return total
    const groups = new Map<string, string[]>()
    for (const row of rows) {
      const users = groups.get(row.video_id)
      if (users) users.push(row.user_id)
      else groups.set(row.video_id, [row.user_id])
    }
    const continued = after[0]
    await Promise.all(
      [...groups].map(async ([videoId, users]) => {
        const mode = input.mode === 'replace' && videoId !== continued ? 'replace' : 'merge'
        const p = input.keys.partitionOf(videoId)
        const setKey = kind === 'likes' ? input.keys.likes(videoId) : input.keys.favorites(videoId)
        const reply = await restoreMembers.run(
          input.redis,
          [setKey, input.keys.rankAll(p, 'likes')],
          [toMember(videoId), input.topK, kind === 'likes' ? '1' : '0', mode, ...users],
        )
        if (typeof reply !== 'number') throw new ScriptContractError(restoreMembers.name, reply)
      }),
    )
    total += rows.length
    const last = rows[rows.length - 1]!
    after = [last.video_id, last.user_id]
    if (rows.length < input.chunkSize) return total
  }
}

async function restorePlayCounters(input: RebuildInput): Promise<number> {
  const text = `SELECT v.id::text AS id, v.play_count::text AS play_count FROM ${input.tables.videos} v
    WHERE v.id > $1::bigint AND ($2::boolean OR v.play_count > 0) ORDER BY v.id LIMIT $3`
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
        const reply = await restorePlays.run(
          input.redis,
          [input.keys.plays(row.id), input.keys.rankAll(p, 'plays')],
          [toMember(row.id), row.play_count, input.topK, input.mode],
        )
        if (typeof reply !== 'number') throw new ScriptContractError(restorePlays.name, reply)
      }),
    )
    total += rows.length
    after = rows[rows.length - 1]!.id
    if (rows.length < input.chunkSize) return total
  }
}

/**
 * Restores one video (both sets, merge; its play counter, max) from the DB: what a
 * toggle should run first while a rebuild is in progress, so that an unlike of a
 * like the rebuild has not reached yet finds the member and produces its event.
 * @returns the restored counts.
 * @throws {CountersDatabaseError} when a query fails. @throws {StoreUnavailableError} when Redis fails.
 */
export async function restoreOneVideo(
  input: Omit<RebuildInput, 'chunkSize' | 'mode' | 'signal'>,
  videoId: string,
): Promise<{ likes: number; favorites: number; plays: number }> {
  const { rows } = await guardSql('read one video', () =>
    input.sql.query<{ kind: string; users: string[] | null; plays: string | null }>(
      `SELECT 'likes' AS kind, array_agg(l.user_id::text) AS users, NULL AS plays FROM ${input.tables.likes} l WHERE l.video_id = $1::bigint
       UNION ALL SELECT 'favorites', array_agg(f.user_id::text), NULL FROM ${input.tables.favorites} f WHERE f.video_id = $1::bigint
       UNION ALL SELECT 'plays', NULL, v.play_count::text FROM ${input.tables.videos} v WHERE v.id = $1::bigint`,
      [videoId],
    ),
  )
  const p = input.keys.partitionOf(videoId)
  const member = toMember(videoId)
  const out = { likes: 0, favorites: 0, plays: 0 }
  for (const row of rows) {
    if (row.kind === 'plays') {
      const reply = await restorePlays.run(
        input.redis,
        [input.keys.plays(videoId), input.keys.rankAll(p, 'plays')],
        [member, row.plays ?? '0', input.topK, 'merge'],
      )
      out.plays = Number(reply)
    } else if (row.users && row.users.length > 0) {
      const kind = row.kind === 'likes' ? 'likes' : 'favorites'
      const reply = await restoreMembers.run(
        input.redis,
        [
          kind === 'likes' ? input.keys.likes(videoId) : input.keys.favorites(videoId),
          input.keys.rankAll(p, 'likes'),
        ],
        [member, input.topK, kind === 'likes' ? '1' : '0', 'merge', ...row.users],
      )
      out[kind] = Number(reply)
    }
  }
  return out
}
