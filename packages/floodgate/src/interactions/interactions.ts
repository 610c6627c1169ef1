import { InvalidArgumentError, ScriptContractError } from '../errors/index.js'
import { toMember } from '../rankings/member.js'
import { openDedicatedConnection } from '../redis/dedicated_connection.js'
import type { LuaScript } from '../redis/lua_script.js'
import type { RedisClient } from '../redis/types.js'
import { ReplicationTimeoutError } from './errors.js'
import { canonicalId, type EntityId } from './ids.js'
import { InteractionKeys } from './keys.js'
import {
  type InteractionOptions,
  type ResolvedInteractionOptions,
  resolveInteractionOptions,
} from './options.js'
import { interactionReply, playScript, toggleScript } from './scripts.js'
import { isPlayViewer } from './viewer.js'

/** Answer of a like / favourite change. */
export interface ToggleResult {
  /** True when the membership changed (and an event was appended); false for a repeat. */
  changed: boolean
  /** The caller's state after the call: liked / favourited or not. */
  active: boolean
  /** Members after the call (SCARD). */
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
  /** With `waitForReplicas`: the connection the writes and their WAIT run on (replaced after a timeout). */
  private waitClient: RedisClient | undefined
  private closed = false

  /**
   * With `waitForReplicas`, opens a duplicate of `redis` for the writes (WAIT blocks the
   * connection it runs on; the caller's other commands must not queue behind it). That
   * connection closes when `redis` ends, or on {@link close}. A write whose reply timed out
   * (the client's command timeout) closes it and the next write opens a new one: writes queue
   * behind each other's WAIT, so the timed-out one may not have run yet, and it must not run
   * after its caller was told it failed (it could undo a later, acknowledged change).
   * @throws {InvalidArgumentError} on invalid options.
   */
  constructor(redis: RedisClient, options: InteractionOptions) {
    this.options = resolveInteractionOptions(options)
    this.keys = new InteractionKeys(this.options.prefix, this.options.partitions)
    this.redis = redis
    if (this.options.waitForReplicas) {
      this.waitClient = this.openWaitClient()
      redis.once('end', () => this.close())
    }
  }

  /** Closes the write connection `waitForReplicas` opened; a no-op without it. Idempotent. */
  close(): void {
    this.closed = true
    this.waitClient?.disconnect()
  }

  private openWaitClient(): RedisClient {
    // every failed call throws its own StoreUnavailableError
    return openDedicatedConnection(this.redis)
  }

  /**
   * After a timed-out write on `client`: closing it (no reconnect, its queue rejected, never
   * resent) makes Redis drop the commands it has not run yet. Once per connection.
   */
  private replaceWaitClient(client: RedisClient): void {
    if (this.closed || this.waitClient !== client) return
    this.waitClient = this.openWaitClient()
    client.disconnect()
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
   * `playDedupeWindowMs`. Rate limiting is the caller's job.
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
        this.keys.seen(item, viewer),
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
      ],
    )
    const { changed, count, eventId } = interactionReply(toggleScript, reply)
    return { changed, active, count, eventId }
  }

  /** One write step; with `waitForReplicas`, followed by WAIT in the same pipeline. */
  private async write(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | number)[],
  ): Promise<unknown> {
    const wait = this.options.waitForReplicas
    const client = this.waitClient
    if (wait === undefined || client === undefined) return script.run(this.redis, keys, args)
    const [reply, acknowledged] = await script
      .runFollowedBy(client, keys, args, { name: 'wait', args: [wait.replicas, wait.timeoutMs] })
      .catch((error: unknown) => {
        if (isCommandTimeout(error)) this.replaceWaitClient(client)
        throw error
      })
    if (typeof acknowledged !== 'number') throw new ScriptContractError('WAIT', acknowledged)
    if (acknowledged < wait.replicas) {
      throw new ReplicationTimeoutError(acknowledged, wait.replicas, wait.timeoutMs)
    }
    return reply
  }
}

/** ioredis's per-command timeout (`commandTimeout`), as {@link LuaScript} wraps it. */
function isCommandTimeout(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined
  return cause instanceof Error && cause.message === 'Command timed out'
}
