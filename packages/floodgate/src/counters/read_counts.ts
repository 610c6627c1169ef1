import {
  checkDeadline,
  DEADLINE_DEFAULTS,
  type Deadline,
  RedisTimeoutError,
  withinDeadline,
} from '../deadline/index.js'
import { canonicalId } from '../interactions/ids.js'
import { InteractionKeys } from '../interactions/keys.js'
import { interactionLayout } from '../interactions/layout.js'
import { memberFlagsScript } from '../interactions/scripts.js'
import { SlotBatch } from '../rankings/slot_batch.js'
import type { RedisClient } from '../redis/index.js'
import { integerIn } from '../validation/index.js'

/** Replies per item in a counts read: HGET + SCARD for likes, the same for favourites, GET plays. */
const PER_ID = 5

/** Whether this process ran the flags script (so a server has it cached) since the last NOSCRIPT. */
let flagsScriptSent = false

/** Counts of one item (e.g. a video) from Redis; the flags only when a viewer was given. */
export interface ItemCounts {
  likes: number
  favorites: number
  plays: number
  /** Whether the viewer likes the item (present only when a viewer id was passed). */
  liked?: boolean
  /** Whether the viewer favourited the item (present only when a viewer id was passed). */
  favorited?: boolean
}

/** Why Redis counts could not be served; the caller then serves the DB columns marked stale. */
export type CountsUnavailableReason = 'redis-error' | 'timeout' | 'epoch-missing' | 'rebuilding'

/** The answer of {@link CountsReader.readCounts}. */
export type CountsRead =
  | { ok: true; counts: Map<string, ItemCounts> }
  | { ok: false; reason: CountsUnavailableReason; error?: unknown }

/** One viewer's flags on one item, asked in a {@link CountsReader.readBatch}. */
export interface FlagQuery {
  itemId: string
  userId: string
}

/** Whether a viewer likes / favourited an item. */
export interface ViewerFlags {
  liked: boolean
  favorited: boolean
}

/** The answer of {@link CountsReader.readBatch}; `flags` is keyed by {@link flagKey}. */
export type CountsBatchRead =
  | { ok: true; counts: Map<string, ItemCounts>; flags: Map<string, ViewerFlags> }
  | { ok: false; reason: CountsUnavailableReason; error?: unknown }

/** Key of one viewer's flags on one item in {@link CountsBatchRead} (canonical ids). */
export function flagKey(itemId: string, userId: string): string {
  return `${userId}:${itemId}`
}

/** What the reader asks the recovery side (a {@link CountsRecovery} fits). */
export interface RecoveryView {
  /** False while this process knows Redis is being rebuilt. */
  serving(): boolean
  /** Called when a read found the epoch marker missing, so the monitor checks at once. */
  notifyEpochMissing(): void
}

/** Options of {@link CountsReader}. */
export interface CountsReaderOptions {
  redis: RedisClient
  /** Key prefix (e.g. `va`). */
  prefix: string
  /** Must match the write path. @default 300 (`INTERACTION_DEFAULTS.partitions`) */
  partitions?: number
  /**
   * Idle event-loop time (ms) the round trip gets before the read gives up (`timeout`); time the
   * process spent busy elsewhere does not count (`withinDeadline`).
   * @default 50 (`DEADLINE_DEFAULTS.timeoutMs`)
   */
  timeoutMs?: number
  /**
   * Longest wall-clock wait (ms) of the round trip, however busy the process.
   * @default 2_000 (`DEADLINE_DEFAULTS.maxWaitMs`), or `timeoutMs` if larger
   */
  maxWaitMs?: number
  /** Recovery state; without it only the epoch marker in the same round trip is checked. */
  recovery?: RecoveryView
}

/**
 * The counts read path (README.md beside this file, "Reading counts"): for a page of items, in ONE
 * pipelined round trip, `GET <prefix>:epoch` plus per item, for likes and favourites, `HGET <meta> n`
 * and `SCARD <bucket 0>` (the count is the meta's `n`, or the SCARD while the item has one bucket:
 * both O(1)), `GET plays` and, with a viewer, one read-only `member-flags-2.lua` per item (exact
 * membership across the buckets, see `interactions/lua/includes/member-buckets.lua`; the first
 * read with a viewer in a process loads the script first, see `send`).
 * Redis answers are served only while the epoch marker is present (Redis has
 * not lost its data since the last rebuild) and no rebuild is running;
 * otherwise, or on any Redis error or timeout, it answers `ok: false` and the
 * caller serves the PostgreSQL count columns flagged as possibly stale.
 */
export class CountsReader {
  readonly keys: InteractionKeys
  private readonly deadline: Deadline

  /** @throws {InvalidArgumentError} for a bad prefix, partition count or timeout. */
  constructor(private readonly options: CountsReaderOptions) {
    const { prefix, partitions } = interactionLayout(options)
    this.keys = new InteractionKeys(prefix, partitions)
    const timeoutMs = integerIn('timeoutMs', options.timeoutMs ?? DEADLINE_DEFAULTS.timeoutMs, 1, 60_000)
    this.deadline = checkDeadline('counts', {
      timeoutMs,
      maxWaitMs: options.maxWaitMs ?? Math.max(DEADLINE_DEFAULTS.maxWaitMs, timeoutMs),
    })
  }

  /**
   * Counts (and the viewer's flags) for every id, keyed by canonical id. Never throws for Redis trouble.
   * @throws {InvalidArgumentError} for an id or viewer that is not a positive 64-bit integer.
   */
  async readCounts(itemIds: readonly string[], viewerUserId?: string): Promise<CountsRead> {
    const ids = itemIds.map((id) => canonicalId('itemIds', id))
    const viewer = viewerUserId === undefined ? undefined : canonicalId('viewerUserId', viewerUserId)
    const read = await this.readBatch(
      ids,
      viewer === undefined ? [] : ids.map((itemId) => ({ itemId, userId: viewer })),
    )
    if (!read.ok || viewer === undefined) return read
    for (const [id, counts] of read.counts) Object.assign(counts, read.flags.get(flagKey(id, viewer)))
    return { ok: true, counts: read.counts }
  }

  /**
   * Why a read sent now would answer `ok: false` without a reply from Redis, or `undefined` when it
   * may succeed: `rebuilding` while the recovery knows Redis is being rebuilt; `redis-error` while
   * the reader's client is not connected and has no offline queue (its commands fail at once).
   * @param onClient false when the read would go on another connection (a tracked one): only the
   * recovery is asked. @default true
   */
  unavailableNow(onClient = true): CountsUnavailableReason | undefined {
    if (this.options.recovery?.serving() === false) return 'rebuilding'
    const client = this.options.redis
    if (onClient && client.status !== 'ready' && client.options.enableOfflineQueue === false)
      return 'redis-error'
    return undefined
  }

  /**
   * Counts of every id and the flags of any number of (item, viewer) pairs — several
   * callers' reads — in the same one round trip as {@link readCounts}. Never throws for
   * Redis trouble.
   * @param via the connection to read on (a tracked one, see `ClientTracking`). @default the reader's client
   * @throws {InvalidArgumentError} for an id that is not a positive 64-bit integer.
   */
  async readBatch(
    itemIds: readonly string[],
    flagQueries: readonly FlagQuery[],
    via: RedisClient = this.options.redis,
  ): Promise<CountsBatchRead> {
    const ids = itemIds.map((id) => canonicalId('itemIds', id))
    const pairs = flagQueries.map((q) => ({
      itemId: canonicalId('itemIds', q.itemId),
      userId: canonicalId('viewerUserId', q.userId),
    }))
    const recovery = this.options.recovery
    if (recovery && !recovery.serving()) return { ok: false, reason: 'rebuilding' }
    if (ids.length === 0 && pairs.length === 0) return { ok: true, counts: new Map(), flags: new Map() }
    let replies: unknown[]
    try {
      replies = await withinDeadline(this.send(ids, pairs, via, false), this.deadline, 'counts read')
    } catch (error) {
      return { ok: false, reason: error instanceof RedisTimeoutError ? 'timeout' : 'redis-error', error }
    }
    if (replies[0] === null) {
      recovery?.notifyEpochMissing()
      return { ok: false, reason: 'epoch-missing' }
    }
    const counts = new Map<string, ItemCounts>()
    ids.forEach((id, i) => {
      const base = 1 + i * PER_ID
      counts.set(id, {
        likes: Number(replies[base] ?? replies[base + 1]),
        favorites: Number(replies[base + 2] ?? replies[base + 3]),
        plays: Number(replies[base + 4] ?? 0),
      })
    })
    const flags = new Map<string, ViewerFlags>()
    pairs.forEach(({ itemId, userId }, i) => {
      const reply = replies[1 + ids.length * PER_ID + i] as [number, number]
      flags.set(flagKey(itemId, userId), { liked: reply[0] === 1, favorited: reply[1] === 1 })
    })
    return { ok: true, counts, flags }
  }

  /**
   * The one round trip: `GET epoch`, per item `HGET <likes meta> n`, `SCARD likes`, the same
   * for favourites, `GET plays`, per pair one `member-flags-2.lua` (EVALSHA). The first read with
   * flags in this process first runs the script once per partition asked (LuaScript: EVAL on
   * NOSCRIPT, which caches it on that node); a NOSCRIPT later (a restart, a failover) does the
   * same and sends the read once more.
   */
  private async send(
    ids: readonly string[],
    pairs: readonly FlagQuery[],
    via: RedisClient,
    retried = false,
  ): Promise<unknown[]> {
    const keys = this.keys
    if (pairs.length > 0 && !flagsScriptSent) {
      await this.loadFlagsScript(pairs, via)
      flagsScriptSent = true
    }
    const epochKey = keys.epoch()
    const batch = new SlotBatch(via).add(epochKey, (p) => p.get(epochKey))
    for (const id of ids) {
      for (const kind of ['likes', 'favorites'] as const) {
        const meta = keys.memberMeta(kind, id)
        const base = keys.members(kind, id)
        batch.add(meta, (p) => p.hget(meta, 'n'))
        batch.add(base, (p) => p.scard(base))
      }
      const plays = keys.plays(id)
      batch.add(plays, (p) => p.get(plays))
    }
    for (const { itemId, userId } of pairs) {
      const likes = keys.members('likes', itemId)
      const favorites = keys.members('favorites', itemId)
      batch.add(likes, (p) => p.evalsha(memberFlagsScript.sha1, 2, likes, favorites, userId))
    }
    try {
      return await batch.exec('counts read')
    } catch (error) {
      if (retried || !String((error as Error).message).includes('NOSCRIPT')) throw error
      flagsScriptSent = false
      return this.send(ids, pairs, via, true)
    }
  }

  /** Runs the flags script once per partition among `pairs` (caches it on each node). */
  private async loadFlagsScript(pairs: readonly FlagQuery[], via: RedisClient): Promise<void> {
    const byPartition = new Map<number, FlagQuery>()
    for (const pair of pairs) byPartition.set(this.keys.partitionOf(pair.itemId), pair)
    await Promise.all(
      [...byPartition.values()].map(({ itemId, userId }) =>
        memberFlagsScript.run(
          via,
          [this.keys.members('likes', itemId), this.keys.members('favorites', itemId)],
          [userId],
        ),
      ),
    )
  }
}
