import { InvalidArgumentError } from '../errors/index.js'
import { toMember } from '../rankings/member.js'
import type { LuaScript } from '../redis/lua_script.js'
import type { RedisClient } from '../redis/types.js'
import { integerIn } from '../validation/index.js'
import { MEMBER_BUCKET_DEFAULTS, PLAY_DEDUPE_DEFAULTS } from './defaults.js'
import { ItemGoneError } from './errors.js'
import { EventBatcher } from './event_batch.js'
import { type ForgetReport, forgetItem } from './forget.js'
import { canonicalId, type EntityId } from './ids.js'
import { InteractionKeys } from './keys.js'
import { memberHash } from './member_buckets.js'
import {
  type InteractionOptions,
  type ResolvedInteractionOptions,
  resolveInteractionOptions,
} from './options.js'
import { ReplicatedWrites } from './replicated_writes.js'
import { runResendingRefusals, writeCapMs } from './resent_write.js'
import {
  type InteractionReply,
  interactionReply,
  playBatchScript,
  playScript,
  toggleBatchScript,
  toggleScript,
} from './scripts.js'
import { isPlayViewer, playViewerHash } from './viewer.js'

/** Answer of a like / favourite change. */
export interface ToggleResult {
  /** True when the membership changed (and an event was appended); false for a repeat. */
  changed: boolean
  /** The caller's state after the call: liked / favourited or not. */
  active: boolean
  /** Members after the call (exact: the item's member count, see `lua/includes/member-buckets.lua`). */
  count: number
  /** Stream id of the appended event, `undefined` when nothing changed. */
  eventId: string | undefined
}

/** Answer of a play. */
export interface PlayResult {
  /** True when this play counted; false for a repeat by the same viewer inside the dedupe window. */
  counted: boolean
  /** The item's play counter after the call. */
  count: number
  /** Stream id of the appended event, `undefined` when not counted. */
  eventId: string | undefined
}

/**
 * The interaction write path: likes, favourites and plays, each one Lua step
 * (one round trip) that changes the Redis state, the rankings and appends an
 * event to the partition's stream, only when something changed. The steps one process asks for
 * in one event-loop poll phase leave as one script call per partition (`maxEventsPerCall`, see
 * {@link EventBatcher}); each caller still gets the answer of its own step, in call order. A
 * {@link InteractionFlush} consumer applies the events to PostgreSQL.
 *
 * Generic over the counted item (a item in item-api): ids are positive 64-bit integers. The
 * caller checks that the item exists and is visible before calling.
 * Redis must run with `maxmemory-policy noeviction` (see {@link checkEvictionPolicy}).
 */
export class Interactions {
  readonly keys: InteractionKeys
  readonly options: ResolvedInteractionOptions
  private readonly redis: RedisClient
  /** With `waitForReplicas`: the writes, batched per node on connections of their own. */
  private readonly replicated: ReplicatedWrites | undefined
  /** The toggles / plays of one poll phase, one script call per partition; undefined when `maxEventsPerCall` is 1. */
  private readonly toggles: EventBatcher | undefined
  private readonly plays: EventBatcher | undefined
  /** How long a write refused before it ran is resent (ms): the client's command cap. */
  private readonly capMs: number

  /**
   * With `waitForReplicas`, the writes go over connections of their own, one per node (WAIT
   * blocks the connection it runs on; the caller's other commands must not queue behind it),
   * each node's writes batched behind one WAIT (see {@link ReplicatedWrites}). They close when
   * `redis` ends, or on {@link close}.
   * @throws {InvalidArgumentError} on invalid options.
   */
  constructor(redis: RedisClient, options: InteractionOptions) {
    this.options = resolveInteractionOptions(options)
    this.keys = new InteractionKeys(this.options.prefix, this.options.partitions)
    this.redis = redis
    this.capMs = writeCapMs(redis)
    if (this.options.waitForReplicas) {
      this.replicated = new ReplicatedWrites(redis, this.options.waitForReplicas)
      redis.once('end', () => this.close())
    }
    if (this.options.maxEventsPerCall > 1) {
      const run = this.write.bind(this)
      this.toggles = new EventBatcher(toggleBatchScript, run, this.options.maxEventsPerCall)
      this.plays = new EventBatcher(playBatchScript, run, this.options.maxEventsPerCall)
    }
  }

  /** Closes the write connections `waitForReplicas` opened; a no-op without it. Idempotent. */
  close(): void {
    this.replicated?.close()
  }

  /**
   * Sets whether `userId` likes `itemId` (PUT: true, DELETE: false). Idempotent.
   * @throws {InvalidArgumentError} on an invalid id. @throws {StoreUnavailableError} when Redis fails.
   * @throws {ReplicationTimeoutError} with `waitForReplicas`, when too few replicas confirmed in time.
   * @throws {ItemGoneError} when the item was forgotten ({@link forget}) within `tombstoneTtlMs`: nothing changed.
   */
  setLiked(itemId: EntityId, userId: EntityId, liked: boolean): Promise<ToggleResult> {
    return this.toggle('like', itemId, userId, liked)
  }

  /**
   * Sets whether `userId` has favourited `itemId`. Idempotent. Favourites have no ranking.
   * @throws {InvalidArgumentError} on an invalid id. @throws {StoreUnavailableError} when Redis fails.
   * @throws {ReplicationTimeoutError} with `waitForReplicas`, when too few replicas confirmed in time.
   * @throws {ItemGoneError} when the item was forgotten ({@link forget}) within `tombstoneTtlMs`: nothing changed.
   */
  setFavorited(itemId: EntityId, userId: EntityId, favorited: boolean): Promise<ToggleResult> {
    return this.toggle('favorite', itemId, userId, favorited)
  }

  /**
   * Records a play by `viewer` (from {@link playViewer}); counted once per viewer per item per
   * dedupe window: with W = `playDedupeWindowMs`, a repeat less than W after the viewer's counted
   * play is not counted, one 2W or more after it is, one in between is when it falls two window
   * generations (floor(Redis time / W)) after the counted one. The viewer is kept as a 53-bit
   * hash ({@link playViewerHash}; collisions undercount by about 2·10⁻⁹ at 10⁷ viewers) in
   * buckets of at most a few hundred (`play-5.lua`), never a key per viewer.
   * Rate limiting is the caller's job.
   * @throws {InvalidArgumentError} on an invalid id or viewer. @throws {StoreUnavailableError} when Redis fails.
   * @throws {ReplicationTimeoutError} with `waitForReplicas`, when too few replicas confirmed in time
   *   (a retry is not counted twice: see the error).
   * @throws {ItemGoneError} when the item was forgotten ({@link forget}) within `tombstoneTtlMs`: nothing counted.
   */
  async recordPlay(itemId: EntityId, viewer: string): Promise<PlayResult> {
    const item = canonicalId('itemId', itemId)
    if (!isPlayViewer(viewer)) throw new InvalidArgumentError('viewer', 'must come from playViewer()')
    const p = this.keys.partitionOf(item)
    const { playDedupeWindowMs, topK, bucketTtlMs } = this.options
    const hash = playViewerHash(viewer)
    const { bucketLoad } = PLAY_DEDUPE_DEFAULTS
    let reply: InteractionReply
    if (this.plays !== undefined) {
      const head = () => ({
        keys: [this.keys.rankAll(p, 'plays'), this.keys.rankMinutePrefix(p, 'plays'), this.keys.stream(p)],
        args: [playDedupeWindowMs, topK, bucketTtlMs, bucketLoad, ''],
      })
      const unit = {
        id: item,
        part: () => ({
          keys: [this.keys.playSeenPrefix(item), this.keys.plays(item), this.keys.gone(item)],
          args: [item, toMember(item)],
        }),
      }
      reply = await this.plays.add(p, head, unit, (j) => [viewer, hash, j])
    } else {
      const keys = [
        this.keys.playSeenPrefix(item),
        this.keys.plays(item),
        this.keys.rankAll(p, 'plays'),
        this.keys.rankMinutePrefix(p, 'plays'),
        this.keys.stream(p),
        this.keys.gone(item),
      ]
      const args = [playDedupeWindowMs, item, toMember(item), viewer, topK, bucketTtlMs, hash, bucketLoad]
      reply = interactionReply(playScript, await this.write(playScript, keys, args))
    }
    if (reply.gone) throw new ItemGoneError(item)
    const { changed, count, eventId } = reply
    return { counted: changed, count, eventId }
  }

  /**
   * Forgets a deleted (or unpublished) item: its likes, favourites, play counter, play-dedupe
   * seen-sets and ranking entries leave Redis in bounded steps (each one command of at most 1,000
   * keys, or one pipeline of at most 500 ZREMs), after a tombstone that makes every later toggle
   * or play of it fail with {@link ItemGoneError} for `tombstoneTtlMs` (default 1 h, see
   * `FORGET_DEFAULTS`) instead of re-creating a key the walk passed. Why a tombstone, and what
   * stays: {@link forgetItem}. Idempotent. Without `waitForReplicas`' WAIT (a failover right
   * after may keep the keys: run it again). Call it after the item is deleted in the database,
   * so that the caller's own check refuses the item once the tombstone expires.
   * @param options.tombstoneTtlMs life of the tombstone (ms, 1,000 … 2,592,000,000). @default 3,600,000
   * @throws {InvalidArgumentError} on an invalid id or tombstone life. @throws {StoreUnavailableError} when Redis fails.
   */
  async forget(itemId: EntityId, options: { tombstoneTtlMs?: number } = {}): Promise<ForgetReport> {
    const item = canonicalId('itemId', itemId)
    if (options.tombstoneTtlMs !== undefined)
      integerIn('tombstoneTtlMs', options.tombstoneTtlMs, 1000, 30 * 86_400_000)
    const { playDedupeWindowMs, bucketTtlMs } = this.options
    return forgetItem(this.redis, this.keys, item, { playDedupeWindowMs, bucketTtlMs, ...options })
  }

  private async toggle(
    kind: 'like' | 'favorite',
    itemId: EntityId,
    userId: EntityId,
    active: boolean,
  ): Promise<ToggleResult> {
    const item = canonicalId('itemId', itemId)
    const user = canonicalId('userId', userId)
    const p = this.keys.partitionOf(item)
    const base = kind === 'like' ? this.keys.likes(item) : this.keys.favorites(item)
    const { topK, bucketTtlMs } = this.options
    const { bucketLoad } = MEMBER_BUCKET_DEFAULTS
    const state = active ? '1' : '0'
    let reply: InteractionReply
    if (this.toggles !== undefined) {
      const head = () => ({
        keys: [this.keys.rankAll(p, 'likes'), this.keys.rankMinutePrefix(p, 'likes'), this.keys.stream(p)],
        args: [topK, bucketTtlMs, bucketLoad],
      })
      const part = () => ({ keys: [base, this.keys.gone(item)], args: [item, toMember(item), kind] })
      const unit = { id: base, part }
      // the member's bucket hash, computed here: Redis need not hash every toggle (the hot shard)
      reply = await this.toggles.add(p, head, unit, (j) => [user, state, j, memberHash(user)])
    } else {
      const keys = [
        base,
        this.keys.rankAll(p, 'likes'),
        this.keys.rankMinutePrefix(p, 'likes'),
        this.keys.stream(p),
        this.keys.gone(item),
      ]
      const ranked = kind === 'like' ? '1' : '0'
      const args = [user, state, item, toMember(item), kind, topK, ranked, bucketTtlMs, bucketLoad]
      reply = interactionReply(toggleScript, await this.write(toggleScript, keys, args))
    }
    if (reply.gone) throw new ItemGoneError(item)
    const { changed, count, eventId } = reply
    return { changed, active, count, eventId }
  }

  /**
   * One write step; with `waitForReplicas`, confirmed by WAIT (see {@link ReplicatedWrites}); without
   * it, resent while a failover's CLUSTERDOWN refuses it ({@link runResendingRefusals}).
   */
  private write(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    if (this.replicated === undefined) return runResendingRefusals(script, this.redis, keys, args, this.capMs)
    return this.replicated.write(script, keys, args)
  }
}
