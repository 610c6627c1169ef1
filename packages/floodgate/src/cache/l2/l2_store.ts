import type { Redis } from 'ioredis'
import type { CircuitBreaker } from '../../circuit_breaker/index.js'
import { countsAgainstRedis, type Deadline, watchDeadline } from '../../deadline/index.js'
import { isCluster, type KeySpace, type RedisClient } from '../../redis/index.js'
import { scopedParts } from '../namespace/scoped_key.js'
import {
  abandonScript,
  type Claim,
  claimReply,
  claimScript,
  type FillResult,
  fillReply,
  fillScript,
  invalidateScript,
  type ReadClaim,
  setScript,
} from '../scripts.js'
import { GetBatcher } from './get_batch.js'
import { ReadClaimBatcher } from './read_claim_batch.js'

/** Returned instead of a reply when Redis failed, timed out, or the breaker is open. */
export const UNAVAILABLE: unique symbol = Symbol('floodgate.cache.l2Unavailable')
export type Unavailable = typeof UNAVAILABLE

/**
 * The Redis tier of one cache: every call goes through the circuit breaker
 * and a loop-aware deadline (`withinDeadline`), and answers {@link UNAVAILABLE}
 * instead of throwing on the read path. The breaker counts errors and timeouts during which
 * the event loop sat idle; a wait that ran long because this process was busy does not count.
 * Keys of one cache key share the hash tag `{<key>}`; a namespaced id (see `scoped_key.ts`) lives
 * under `<area>:n:<namespace>:<generation>`, so a clear (a new generation) leaves every older
 * key (value, negative entry, version, lock) unreachable at once, to expire on its own TTL.
 */
export class L2Store {
  readonly wakeChannel: string
  readonly busChannel: string
  /** GETs in flight per id that later {@link readShared} calls join (dropped by any write of the id). */
  private readonly sharedReads = new Map<string, Promise<Buffer | null | Unavailable>>()
  /** The single-key GETs of a poll phase, one MGET per connection (see `get_batch.ts`). */
  private readonly gets: GetBatcher
  /** The read-claims of a poll phase, one `read-claim-n.lua` call per connection (see `read_claim_batch.ts`). */
  private readonly claims: ReadClaimBatcher
  /** Read-claims whose reply was lost, given back once a call succeeds again ({@link readOrClaim}). */
  private lostClaims: { key: string; token: string; tracked: { connection: Redis } | undefined }[] = []
  /** The client when it is a single node (GETs are batched), undefined on a cluster. */
  private readonly singleNode: Redis | undefined

  constructor(
    readonly redis: RedisClient,
    private readonly keySpace: KeySpace,
    private readonly area: string,
    private readonly breaker: CircuitBreaker,
    private readonly deadline: Deadline,
    private readonly onError: (error: unknown) => void,
    readBatchMaxKeys: number,
    /** Called with the ids whose in-flight reads no later call may join (every id when undefined). */
    private readonly onForget: (keys: readonly string[] | undefined) => void = () => {},
  ) {
    this.gets = new GetBatcher(readBatchMaxKeys)
    this.claims = new ReadClaimBatcher(readBatchMaxKeys)
    this.singleNode = isCluster(redis) ? undefined : redis
    this.wakeChannel = keySpace.channel(`${area}:filled`)
    this.busChannel = keySpace.channel(`${area}:invalidate`)
  }

  valueKey(id: string): string {
    const parts = scopedParts(id)
    return parts === undefined
      ? this.keySpace.tagged(this.area, id)
      : this.keySpace.tagged(`${this.area}:n:${parts.namespace}:${parts.generation}`, parts.key)
  }

  /** The key holding a namespace's generation (absent until its first clear: generation 0). */
  private generationKey(namespace: string): string {
    return this.keySpace.plain(`${this.area}:n:${namespace}`, 'gen')
  }

  private keysOf(key: string) {
    const value = this.valueKey(key)
    return { value, version: `${value}:ver`, lock: `${value}:lock`, wait: `${value}:wait` }
  }

  /** Runs `op` behind the breaker and the deadline. `force` skips the breaker's admission (writes). */
  guard<R>(op: () => Promise<R>, force = false): Promise<R | Unavailable> {
    if (!this.breaker.allow() && !force) return Promise.resolve(UNAVAILABLE)
    let call: Promise<R>
    try {
      call = op()
    } catch (error) {
      call = Promise.reject(error)
    }
    // one promise per call: the deadline settles it through callbacks
    return new Promise((resolve) =>
      watchDeadline(
        call,
        this.deadline,
        'cache L2',
        (result) => {
          this.breaker.success()
          if (this.lostClaims.length > 0) this.giveBackLostClaims()
          resolve(result)
        },
        (error) => {
          if (countsAgainstRedis(error)) this.breaker.failure()
          else this.breaker.inconclusive()
          this.onError(error)
          resolve(UNAVAILABLE)
        },
      ),
    )
  }

  /**
   * GET of the value key, as bytes; null when absent. `tracked`: sent on that connection (the
   * tracked L1's, see `l1/l1_tracking.ts`) under its value key instead of the caller's client.
   * On a single node the GETs of one poll phase leave as one MGET ({@link GetBatcher}).
   */
  read(key: string, tracked?: { connection: Redis; valueKey: string }): Promise<Buffer | null | Unavailable> {
    if (tracked !== undefined) return this.guard(() => this.gets.get(tracked.connection, tracked.valueKey))
    const single = this.singleNode
    if (single !== undefined) return this.guard(() => this.gets.get(single, this.valueKey(key)))
    return this.guard(() => this.redis.getBuffer(this.valueKey(key)))
  }

  /**
   * {@link read}, joined by concurrent calls for the same id (singleflight of the GET, as
   * cache-manager's `wrap` does for hits): callers share the bytes and decode their own copy. A
   * read never joins one that began before a write of its id by this process (every write here
   * forgets the id first; commands on one connection run in order), nor before an invalidation
   * or clear announced on the bus ({@link forgetSharedReads}); a write of another instance not yet
   * announced is seen one GET later, within the bound the L1 already has.
   */
  readShared(key: string): Promise<Buffer | null | Unavailable> {
    const joined = this.sharedReads.get(key)
    if (joined !== undefined) return joined
    const read = this.read(key)
    this.sharedReads.set(key, read)
    read.then(() => {
      if (this.sharedReads.get(key) === read) this.sharedReads.delete(key)
    })
    return read
  }

  /** Lets no later {@link readShared} join a GET of `keys` in flight (all ids when omitted). */
  forgetSharedReads(keys?: readonly string[]): void {
    if (keys === undefined) this.sharedReads.clear()
    else for (const key of keys) this.sharedReads.delete(key)
    this.onForget(keys)
  }

  /** The value keys of `keys`, as bytes: one MGET on a single node, parallel GETs on a cluster (keys span slots). */
  readMany(keys: readonly string[]): Promise<(Buffer | null)[] | Unavailable> {
    const valueKeys = keys.map((k) => this.valueKey(k))
    if (isCluster(this.redis)) {
      const cluster = this.redis
      return this.guard(() => Promise.all(valueKeys.map((k) => cluster.getBuffer(k))))
    }
    const client = this.redis
    return this.guard(() => client.mgetBuffer(...valueKeys))
  }

  /** Current data versions of `keys` (absent = '0'), for loads that take no lock (batches). */
  versions(keys: readonly string[]): Promise<string[] | Unavailable> {
    return this.guard(() =>
      Promise.all(keys.map((k) => this.redis.get(this.keysOf(k).version).then((v) => v ?? '0'))),
    )
  }

  /**
   * Runs `lua/claim-4.lua`. When no reply comes back (Redis failed or the deadline passed) it
   * answers {@link UNAVAILABLE} and gives back, in the background, the lock the claim may have taken.
   */
  async claim(
    key: string,
    token: string,
    lockTtlMs: number,
    mode: 'miss' | 'refresh',
  ): Promise<Claim | Unavailable> {
    const k = this.keysOf(key)
    let sent = false
    const reply = await this.guard(() => {
      sent = true
      return claimScript.run(this.redis, [k.value, k.version, k.lock, k.wait], [token, lockTtlMs, mode])
    })
    if (reply === UNAVAILABLE) {
      // The claim may have run though its reply was lost (past the deadline, or the connection
      // dropped after the write): then nobody fills under its token, and every instance's waiters
      // would sit out their deadline. Give the lock back: sent after it on the same connection,
      // abandon-2.lua runs after the claim, releases the lock if the claim took it, wakes them.
      if (sent) void this.abandon(key, token, 0)
      return reply
    }
    return claimReply(reply)
  }

  /**
   * An L1 miss's L2 read, claiming the loader lock under `token` for `lockTtlMs` (ms) in the same
   * round trip when the value is absent (`lua/read-claim-n.lua`; the misses of one poll phase on one
   * connection share a call). `tracked`: sent on that connection (the tracked L1's) so Redis
   * tracks the value key as it would a GET's. When no reply comes back (Redis failed or the
   * deadline passed) it answers {@link UNAVAILABLE}; a lock the call took is given back when its
   * late reply says so, or (no reply at all) once a call of this store succeeds again.
   */
  async readOrClaim(
    key: string,
    token: string,
    lockTtlMs: number,
    tracked?: { connection: Redis },
  ): Promise<ReadClaim | Unavailable> {
    const k = this.keysOf(key)
    let call: Promise<ReadClaim> | undefined
    const reply = await this.guard(() => {
      call = this.claims.claim(tracked?.connection ?? this.redis, {
        keys: [k.value, k.version, k.lock, k.wait],
        token,
        lockTtlMs,
      })
      return call
    })
    // As in claim(), abandon-2.lua gives back a lock the call took, sent after it on its
    // connection: at once when its late reply says it did; after a late error (outcome unknown)
    // once a call succeeds again, as a black-holed Redis would hold one more command per lost read.
    if (reply === UNAVAILABLE && call !== undefined)
      call.then(
        (late) => {
          if (late.kind === 'acquired') void this.abandon(key, token, 0, tracked)
        },
        () => this.lostClaims.push({ key, token, tracked }),
      )
    return reply
  }

  /** Sends abandon-2.lua for every read-claim whose reply was lost (a claim it took is released). */
  private giveBackLostClaims(): void {
    const lost = this.lostClaims
    this.lostClaims = []
    for (const { key, token, tracked } of lost) void this.abandon(key, token, 0, tracked)
  }

  /**
   * Runs fill-4.lua. Like the other writes it bypasses an open breaker's admission: the caller
   * holds the key's lock (its claim got through), and a skipped fill would leave the lock held
   * for its TTL and every waiter, on every instance, waiting out its deadline. On a dead Redis it
   * fails at once; on a black-holed one it costs this caller the timeout (only holders whose claim
   * went through before the breaker opened).
   */
  async fill(
    key: string,
    envelope: Buffer,
    physicalTtlMs: number,
    version: string,
    token: string,
    mode: 'set' | 'nx',
  ): Promise<FillResult | Unavailable> {
    const k = this.keysOf(key)
    this.forgetSharedReads([key])
    const reply = await this.guard(
      () =>
        fillScript.run(
          this.redis,
          [k.value, k.version, k.lock, k.wait],
          [envelope, physicalTtlMs, version, token, mode, this.wakeChannel, key],
        ),
      true,
    )
    if (reply === UNAVAILABLE) return reply
    return fillReply(reply)
  }

  /**
   * Runs abandon-2.lua: releases the lock (or keeps it `backoffMs` ms as a back-off) and wakes
   * waiters; on `on.connection` when given (the one the claim went on, so it runs after it).
   */
  abandon(key: string, token: string, backoffMs: number, on?: { connection: Redis }): Promise<unknown> {
    const k = this.keysOf(key)
    return this.guard(
      () =>
        abandonScript.run(
          on?.connection ?? this.redis,
          [k.lock, k.wait],
          [token, backoffMs, this.wakeChannel, key],
        ),
      true,
    )
  }

  /** Runs invalidate-2.lua. @returns false when Redis failed (the caller retries). */
  async invalidate(key: string, versionTtlMs: number): Promise<boolean> {
    const k = this.keysOf(key)
    this.forgetSharedReads([key])
    const reply = await this.guard(
      () => invalidateScript.run(this.redis, [k.value, k.version], [versionTtlMs]),
      true,
    )
    return reply !== UNAVAILABLE
  }

  /** Runs set-2.lua. @throws {StoreUnavailableError} when Redis failed. */
  async set(key: string, envelope: Buffer, physicalTtlMs: number, versionTtlMs: number): Promise<void> {
    const k = this.keysOf(key)
    this.forgetSharedReads([key])
    await setScript.run(this.redis, [k.value, k.version], [envelope, physicalTtlMs, versionTtlMs])
  }

  /** Deletes the value key only (a corrupt entry); never throws. */
  async deleteValue(key: string): Promise<void> {
    this.forgetSharedReads([key])
    await this.guard(() => this.redis.del(this.valueKey(key)), true)
  }

  /** GET of a namespace's generation (absent = 0). `force` skips the breaker's admission (writes). */
  async generation(namespace: string, force = false): Promise<number | Unavailable> {
    const reply = await this.guard(() => this.redis.get(this.generationKey(namespace)), force)
    return reply === UNAVAILABLE ? reply : Number(reply ?? 0)
  }

  /**
   * INCR of a namespace's generation: the clear itself. The key has no TTL (one small key per
   * namespace ever cleared): if it expired, the generation would restart and older entries return.
   */
  async bumpGeneration(namespace: string): Promise<number | Unavailable> {
    return this.guard(() => this.redis.incr(this.generationKey(namespace)), true)
  }

  /** Publishes an L1 invalidation on the bus. @returns false when Redis failed. */
  async publishInvalidation(message: string): Promise<boolean> {
    const reply = await this.guard(() => this.redis.publish(this.busChannel, message), true)
    return reply !== UNAVAILABLE
  }
}
