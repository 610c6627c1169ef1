import { EventEmitter } from 'node:events'
import {
  checkDeadline,
  countsAgainstRedis,
  DEADLINE_DEFAULTS,
  type Deadline,
  withinDeadline,
} from '../deadline/index.js'
import { nonNegativeInteger } from '../validation/index.js'
import type { BloomFilter } from './bloom_filter.js'
import { CoalescedCall } from './coalesced_call.js'
import { toGeneration } from './layout.js'
import { ReplicaFeed } from './replica_feed.js'
import {
  BLOOM_REPLICA_DEFAULTS,
  type BloomReplicaEvents,
  type BloomReplicaOptions,
  type BloomReplicaState,
} from './replica_options.js'
import type { ShardBitmaps } from './shard_bitmaps.js'

export {
  BLOOM_REPLICA_DEFAULTS,
  type BloomReplicaEvents,
  type BloomReplicaOptions,
  type BloomReplicaReloadReason,
  type BloomReplicaState,
} from './replica_options.js'

/** Syncs a query tries when the previous one only stalled with this process (not a Redis failure). */
const SYNC_ATTEMPTS = 5

/**
 * An in-process copy of a {@link BloomFilter}'s bits (m / 8 bytes), so "definitely absent" costs
 * no Redis round trip and cannot time out. Redis stays the source: the replica subscribes to the
 * filter's channel first, then loads the ready generation with the add number (`addseq`) it holds,
 * then applies the announced adds numbered after it, in order. A gap in the numbers, a generation
 * switch, a subscriber reconnect or a buffer overflow loads it again, answering meanwhile from the
 * old bits (old generation plus adds: a superset of the new one).
 *
 * Never a false "absent" (causality): adds reach a replica asynchronously, so an "absent" from the
 * bits counts only once the replica has applied every add announced before the query began. A
 * query whose bits say "absent" joins a coalesced sync: one `HMGET meta ready addseq` shared by
 * every query that arrived before it was sent. If the replica has applied up to that `addseq` in
 * that generation, the bits answer; otherwise it waits up to `catchUpWaitMs` for the
 * announcements, then asks the filter in Redis. Why this suffices: `BloomFilter.add` resolves only
 * after its add is numbered → an entity's create returns after that → a read anywhere that starts
 * after the create returned sends its sync after it → the sync reads `addseq` ≥ that add's number
 * → the bits hold the add. "Maybe" from the bits needs no sync (no round trip); a burst of absent
 * ids costs about two HMGETs per round trip per process, not one per query.
 *
 * Fails open: sync or fallback failing (Redis down, past its deadline) → "maybe". Memory: m / 8
 * bytes (two copies during a load) plus at most `maxBufferedMessages` buffered announcements.
 */
export class BloomReplica extends EventEmitter<BloomReplicaEvents> {
  /** Marks an in-process Bloom gate for the cache: asked before L2 (see `BloomGate`). */
  readonly inProcess = true
  /** Counts since construction. */
  readonly stats = {
    /** Items answered "absent" from the bits after a sync. */
    localAbsent: 0,
    /** Items answered by the filter in Redis (replica not loaded, or behind after its wait). */
    remote: 0,
    /** Items answered "maybe" without bits while another query of this replica asked Redis. */
    unloaded: 0,
    /** Items answered "maybe" because the sync failed. */
    syncFailures: 0,
    /** Queries that waited for announcements after a sync. */
    catchUpWaits: 0,
    reloads: 0,
  }
  private readonly filter: BloomFilter
  private readonly deadline: Deadline
  private readonly catchUpWaitMs: number
  private readonly sync: CoalescedCall<{ ready: number | null; addSeq: number }>
  /** Keeps the bits current: subscription, loads, announced adds. */
  private readonly feed: ReplicaFeed
  private lastReadSeq = 0
  /** A query without bits is asking the filter in Redis (see {@link withoutBits}). */
  private probing = false
  /** The last such query found the filter in Redis not ready (never built, or lost). */
  private redisNotReady = false
  private readonly caughtUpWaiters = new Set<() => void>()

  /** @throws {InvalidArgumentError} on out-of-range options. */
  constructor(options: BloomReplicaOptions) {
    super()
    this.filter = options.filter
    const source = options.filter.replicaSource()
    const { layout, redis } = source
    this.deadline = checkDeadline('deadline', options.deadline ?? DEADLINE_DEFAULTS)
    this.catchUpWaitMs = nonNegativeInteger(
      'catchUpWaitMs',
      options.catchUpWaitMs ?? BLOOM_REPLICA_DEFAULTS.catchUpWaitMs,
    )
    const maxBufferedMessages = nonNegativeInteger(
      'maxBufferedMessages',
      options.maxBufferedMessages ?? BLOOM_REPLICA_DEFAULTS.maxBufferedMessages,
    )
    const retryBaseMs = nonNegativeInteger(
      'retryBaseMs',
      options.retryBaseMs ?? BLOOM_REPLICA_DEFAULTS.retryBaseMs,
    )
    const retryMaxMs = nonNegativeInteger(
      'retryMaxMs',
      options.retryMaxMs ?? BLOOM_REPLICA_DEFAULTS.retryMaxMs,
    )
    this.sync = new CoalescedCall(async () => {
      const [ready, addSeq] = await withinDeadline(
        redis.hmget(layout.meta, 'ready', 'addseq'),
        this.deadline,
        'bloom replica sync',
      )
      return { ready: toGeneration(ready), addSeq: Number(addSeq ?? 0) }
    })
    this.feed = new ReplicaFeed({
      name: options.filter.name,
      layout,
      positions: source.positions,
      redis,
      loadRedis: options.loadRedis ?? redis,
      maxBufferedMessages,
      retryBaseMs,
      retryMaxMs,
      logger: options.logger,
      events: this,
      stats: this.stats,
      onApplied: () => this.wakeCaughtUp(),
    })
  }

  /** The replica's state (see {@link BloomReplicaState}). */
  get state(): BloomReplicaState {
    return this.feed.state
  }

  /** Generation of the bits (0 before the first load) and the last add applied to them. */
  get position(): { generation: number; appliedSeq: number } {
    return { generation: this.feed.generation, appliedSeq: this.feed.appliedSeq }
  }

  /** Adds announced (as of the last sync) that the bits do not hold yet; 0 when caught up. */
  get lag(): number {
    return Math.max(0, this.lastReadSeq - this.feed.appliedSeq)
  }

  /** Syncs (HMGETs) sent so far. */
  get syncs(): number {
    return this.sync.sent
  }

  /**
   * Subscribes and loads. Resolves after the first load attempt (live, or not ready / failed:
   * retried in the background with backoff until it loads or the replica closes). Never rejects.
   */
  start(): Promise<void> {
    return this.feed.start()
  }

  /**
   * The local bits' answer for `item`, synchronously, without asking Redis: `true` = maybe
   * present, `false` = absent from the adds applied so far (one announced since may be missing:
   * {@link mightContain} checks that before it answers "absent"), `undefined` when no bits are live.
   */
  localAnswer(item: string): boolean | undefined {
    const bits = this.feed.bits
    return bits === undefined || this.feed.state !== 'live' ? undefined : bits.has(item)
  }

  /**
   * One answer per item: `false` = definitely absent, `true` = maybe present (see the class doc
   * for when "absent" is trusted). Never throws: Redis trouble answers "maybe".
   */
  async mightContain(items: readonly string[]): Promise<boolean[]> {
    const bits = this.feed.bits
    if (bits === undefined || this.feed.state === 'closed') return this.withoutBits(items)
    const answers = items.map((item) => bits.has(item))
    if (answers.every(Boolean)) return answers
    let read: { ready: number | null; addSeq: number } | undefined
    // a sync that timed out only because this process stalled says nothing about Redis: sync again
    for (let attempt = 1; read === undefined; attempt++) {
      try {
        read = await this.sync.next()
      } catch (error) {
        if (countsAgainstRedis(error) || attempt >= SYNC_ATTEMPTS) {
          this.stats.syncFailures += answers.filter((a) => !a).length
          return answers.fill(true)
        }
      }
    }
    this.lastReadSeq = Math.max(this.lastReadSeq, read.addSeq)
    if (this.feed.state === 'live' && read.ready !== null && read.ready !== this.feed.generation)
      this.feed.reload('generation')
    const now = read.ready === null ? undefined : await this.caughtUpWith(read.ready, read.addSeq)
    if (now === undefined) {
      const absentIndexes = answers.flatMap((a, i) => (a ? [] : [i]))
      const remote = await this.remote(absentIndexes.map((i) => items[i]!))
      for (const [j, i] of absentIndexes.entries()) answers[i] = remote[j] ?? true
      return answers
    }
    // `now` holds every add announced before this query began: ask it again
    for (let i = 0; i < answers.length; i++) {
      if (answers[i]) continue
      answers[i] = now.has(items[i]!)
      if (!answers[i]) this.stats.localAbsent++
    }
    return answers
  }

  /** Stops: closes the subscriber connection (the filter's client stays open). */
  close(): void {
    if (this.feed.state === 'closed') return
    this.feed.close()
    this.wakeCaughtUp()
  }

  /**
   * The bits once they are live in `generation` with every add ≤ `addSeq` applied, waiting up to
   * `catchUpWaitMs`; undefined when they are not by then.
   */
  private async caughtUpWith(generation: number, addSeq: number): Promise<ShardBitmaps | undefined> {
    const feed = this.feed
    const caughtUp = () =>
      feed.state === 'live' && feed.generation === generation && feed.appliedSeq >= addSeq
    if (caughtUp()) return feed.bits
    if (this.catchUpWaitMs === 0 || feed.state === 'closed') return undefined
    this.stats.catchUpWaits++
    let wake = () => {}
    const arrived = new Promise<void>((resolve) => {
      wake = () => {
        if (caughtUp() || feed.state === 'closed') resolve()
      }
      this.caughtUpWaiters.add(wake)
    })
    // on the idle clock too: a busy loop delays the announcements, it does not lose them
    const wait = {
      timeoutMs: this.catchUpWaitMs,
      maxWaitMs: Math.max(this.catchUpWaitMs, this.deadline.maxWaitMs),
    }
    try {
      await withinDeadline(arrived, wait, 'bloom replica catch-up')
    } catch {
      // not caught up in time: the caller asks the filter in Redis
    } finally {
      this.caughtUpWaiters.delete(wake)
    }
    return caughtUp() ? feed.bits : undefined
  }

  /**
   * No bits (before the first load, or after Redis lost the filter until its rebuild is loaded).
   * While the filter in Redis is known not ready, one query at a time asks it (which also feeds a
   * lifecycle's "not ready" watch) and the queries meanwhile answer "maybe" at once: each used to
   * wait its own round trip, 15–200 ms per read while a restarted Redis served the rebuild and the
   * replicas' loads. A ready filter (start-up, before the first load) answers every query: its
   * "absent" answers keep reads off the database.
   */
  private async withoutBits(items: readonly string[]): Promise<boolean[]> {
    if (this.probing) {
      if (!this.redisNotReady) return this.remote(items)
      this.stats.unloaded += items.length
      return items.map(() => true)
    }
    this.probing = true
    const notReadyBefore = this.filter.stats.failOpenNotReady
    try {
      const answers = await this.remote(items)
      this.redisNotReady = this.filter.stats.failOpenNotReady > notReadyBefore
      return answers
    } finally {
      this.probing = false
    }
  }

  /** The filter in Redis answers (within the deadline; "maybe" on any failure). */
  private async remote(items: readonly string[]): Promise<boolean[]> {
    if (items.length === 0) return []
    this.stats.remote += items.length
    try {
      return await withinDeadline(this.filter.mightContain(items), this.deadline, 'bloom replica fallback')
    } catch {
      return items.map(() => true)
    }
  }

  private wakeCaughtUp(): void {
    for (const wake of [...this.caughtUpWaiters]) wake()
  }
}
