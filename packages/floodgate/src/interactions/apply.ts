import type { SqlDatabase, SqlExecutor } from '../sql/executor.js'
import {
  LOCK_SLOTS,
  lockSlotsStatement,
  mergeStatement,
  STAGE_COPY,
  STAGE_DDL,
  type WatermarkSource,
  watermarkStatement,
} from './apply_sql.js'
import { stageParams, stageRows } from './apply_stage.js'
import type { InteractionEvent, MembershipEvent, PlayEvent } from './events.js'
import { type InteractionTablesOptions, quoteTables, resolveTables } from './tables.js'

/** What one batch changed in PostgreSQL (rows actually inserted or deleted). */
export interface ApplyResult {
  likesAdded: number
  likesRemoved: number
  favoritesAdded: number
  favoritesRemoved: number
  playsAdded: number
  /** Membership events whose watermark advanced (newer than anything applied for that key). */
  advanced: number
}

/**
 * Nets a batch: per (kind, item, user) only the event with the greatest stream id survives
 * (events carry absolute state, so the newest one is the net effect); plays are deduplicated by
 * event id. One SQL statement may then touch each key once ("ON CONFLICT DO UPDATE command cannot
 * affect row a second time" cannot happen).
 */
export function netEvents(events: readonly InteractionEvent[]): {
  memberships: MembershipEvent[]
  plays: PlayEvent[]
} {
  const memberships = new Map<string, MembershipEvent>()
  const plays = new Map<string, PlayEvent>()
  for (const e of events) {
    if (e.kind === 'play') {
      plays.set(e.eventId, e)
      continue
    }
    const key = `${e.kind}:${e.itemId}:${e.userId}`
    const seen = memberships.get(key)
    if (!seen || newer(e, seen)) memberships.set(key, e)
  }
  return { memberships: [...memberships.values()], plays: [...plays.values()] }
}

function newer(a: MembershipEvent, b: MembershipEvent): boolean {
  const am = BigInt(a.ms)
  const bm = BigInt(b.ms)
  return am !== bm ? am > bm : BigInt(a.seq) > BigInt(b.seq)
}

/**
 * Applies one batch in one transaction, order-safe and idempotent, in the same few statements
 * whatever its size:
 * 1. advisory locks on the batch's lock slots (item mod 256, `LOCK_SLOTS`), ascending: two
 *    consumers meet on their first common slot and queue there instead of deadlocking;
 * 2. with {@link SqlExecutor.copyFrom}: `COPY` the batch into a session-local staging table
 *    (created once per session); without it (PGlite, Kysely) statement 3 takes the batch as
 *    arrays through `unnest` and writes the staging table itself;
 * 3. per-(kind, item, user) watermarks advanced only by a greater stream id (a late, claimed
 *    event older than what was applied changes nothing), see `watermarkStatement` in apply_sql.ts;
 * 4. detail rows inserted or deleted to match the advanced keys' absolute state, play log rows
 *    keyed by event id, and one count update per item by the rows actually inserted − deleted,
 *    see `mergeStatement` in apply_sql.ts.
 * Events of items missing from the items table change nothing (their counts cannot exist).
 * See docs/decisions/0013-flush-apply-copy-and-merge.md for why the watermarks stay per key.
 */
export class InteractionApplier {
  private readonly lockSql: string
  private readonly watermarkSql: Record<WatermarkSource, string>
  private readonly mergeSql: string
  /** Backend pids of the sessions that have the staging table (temporary tables live per session). */
  private readonly staged = new Set<number>()

  /** @throws {InvalidArgumentError} on an invalid table or column name. */
  constructor(tables: InteractionTablesOptions = {}) {
    const t = quoteTables(resolveTables(tables))
    this.lockSql = lockSlotsStatement(t)
    this.watermarkSql = { stage: watermarkStatement(t, 'stage'), params: watermarkStatement(t, 'params') }
    this.mergeSql = mergeStatement(t)
  }

  /** Nets `events` and applies them in one transaction of `db`. Throws the database's error unchanged. */
  apply(db: SqlDatabase, events: readonly InteractionEvent[]): Promise<ApplyResult> {
    const { memberships, plays } = netEvents(events)
    return db.transaction((tx) => this.applyNetted(tx, memberships, plays))
  }

  /**
   * Applies already-netted events (at most one per (kind, item, user), plays unique by event id)
   * inside a transaction the caller owns. Throws the database's error unchanged.
   */
  async applyNetted(
    tx: SqlExecutor,
    memberships: readonly MembershipEvent[],
    plays: readonly PlayEvent[],
  ): Promise<ApplyResult> {
    const result: ApplyResult = {
      likesAdded: 0,
      likesRemoved: 0,
      favoritesAdded: 0,
      favoritesRemoved: 0,
      playsAdded: 0,
      advanced: 0,
    }
    if (memberships.length === 0 && plays.length === 0) return result
    const slots = new Set<number>()
    for (const e of memberships) slots.add(lockSlot(e.itemId))
    for (const e of plays) slots.add(lockSlot(e.itemId))
    const { rows } = await tx.query<{ pid: number }>(this.lockSql, [[...slots]])
    const pid = Number(rows[0]?.pid)
    try {
      if (!this.staged.has(pid)) {
        await tx.query(STAGE_DDL)
        this.staged.add(pid)
      }
      let marked: { advanced: number }[]
      if (tx.copyFrom) {
        await tx.copyFrom(STAGE_COPY, stageRows(memberships, plays))
        marked = (await tx.query<{ advanced: number }>(this.watermarkSql.stage)).rows
      } else {
        marked = (
          await tx.query<{ advanced: number }>(this.watermarkSql.params, stageParams(memberships, plays))
        ).rows
      }
      result.advanced = Number(marked[0]?.advanced ?? 0)
    } catch (error) {
      // the session may have lost its temporary table (DISCARD ALL, or a new session that reuses
      // the pid): forget it, so the retried batch creates it again
      this.staged.delete(pid)
      throw error
    }
    const counts = (await tx.query<Record<string, number>>(this.mergeSql)).rows[0] ?? {}
    result.likesAdded = Number(counts.likes_added ?? 0)
    result.likesRemoved = Number(counts.likes_removed ?? 0)
    result.favoritesAdded = Number(counts.favorites_added ?? 0)
    result.favoritesRemoved = Number(counts.favorites_removed ?? 0)
    result.playsAdded = Number(counts.plays_added ?? 0)
    return result
  }
}

/** `itemId mod LOCK_SLOTS` of a canonical decimal id (BigInt only past 2^53). */
function lockSlot(itemId: string): number {
  return itemId.length <= 15 ? Number(itemId) % LOCK_SLOTS : Number(BigInt(itemId) % BigInt(LOCK_SLOTS))
}
