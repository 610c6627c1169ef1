import { InvalidArgumentError } from '../errors/index.js'
import { toMember } from '../rankings/member.js'
import type { LuaScript } from '../redis/lua_script.js'
import type { RedisClient } from '../redis/types.js'
import { MEMBER_BUCKET_DEFAULTS, PLAY_DEDUPE_DEFAULTS } from './defaults.js'
import { canonicalId, type EntityId } from './ids.js'
import { InteractionKeys } from './keys.js'
import {
  type InteractionOptions,
  type ResolvedInteractionOptions,
  resolveInteractionOptions,
} from './options.js'
import { ReplicatedWrites } from './replicated_writes.js'
import { interactionReply, playScript, toggleScript } from './scripts.js'
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
 * event to the partition's stream, only when something changed. A
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
    if (this.options.waitForReplicas) {
      this.replicated = new ReplicatedWrites(redis, this.options.waitForReplicas)
      redis.once('end', () => this.close())
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
   */
  setLiked(itemId: EntityId, userId: EntityId, liked: boolean): Promise<ToggleResult> {
    return this.toggle('like', itemId, userId, liked)
  }

  /**
   * Sets whether `userId` has favourited `itemId`. Idempotent. Favourites have no ranking.
   * @throws {InvalidArgumentError} on an invalid id. @throws {StoreUnavailableError} when Redis fails.
   * @throws {ReplicationTimeoutError} with `waitForReplicas`, when too few replicas confirmed in time.
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
   */
  async recordPlay(itemId: EntityId, viewer: string): Promise<PlayResult> {
    const item = canonicalId('itemId', itemId)
    if (!isPlayViewer(viewer)) throw new InvalidArgumentError('viewer', 'must come from playViewer()')
    const p = this.keys.partitionOf(item)
    const reply = await this.write(
      playScript,
      [
        this.keys.playSeenPrefix(item),
        this.keys.plays(item),
        this.keys.rankAll(p, 'plays'),
        this.keys.rankMinutePrefix(p, 'plays'),
        this.keys.stream(p),
      ],
      [
        this.options.playDedupeWindowMs,
        item,
        toMember(item),
        viewer,
        this.options.topK,
        this.options.bucketTtlMs,
        playViewerHash(viewer),
        PLAY_DEDUPE_DEFAULTS.bucketLoad,
      ],
    )
    const { changed, count, eventId } = interactionReply(playScript, reply)
    return { counted: changed, count, eventId }
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
    const reply = await this.write(
      toggleScript,
      [
        kind === 'like' ? this.keys.likes(item) : this.keys.favorites(item),
        this.keys.rankAll(p, 'likes'),
        this.keys.rankMinutePrefix(p, 'likes'),
        this.keys.stream(p),
      ],
      [
        user,
        active ? '1' : '0',
        item,
        toMember(item),
        kind,
        this.options.topK,
        kind === 'like' ? '1' : '0',
        this.options.bucketTtlMs,
        MEMBER_BUCKET_DEFAULTS.bucketLoad,
      ],
    )
    const { changed, count, eventId } = interactionReply(toggleScript, reply)
    return { changed, active, count, eventId }
  }

  /** One write step; with `waitForReplicas`, confirmed by WAIT (see {@link ReplicatedWrites}). */
  private write(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    if (this.replicated === undefined) return script.run(this.redis, keys, args)
    return this.replicated.write(script, keys, args)
  }
}
