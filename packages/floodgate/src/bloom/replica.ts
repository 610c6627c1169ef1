import { EventEmitter } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cluster, Redis } from 'ioredis'
import { fullJitterDelayMs } from '../backoff/index.js'
import {
  checkDeadline,
  countsAgainstRedis,
  DEADLINE_DEFAULTS,
  type Deadline,
  withinDeadline,
} from '../deadline/index.js'
import type { Logger } from '../observability/index.js'
import { openDedicatedConnection } from '../redis/dedicated_connection.js'
import type { RedisClient } from '../redis/index.js'
import { nonNegativeInteger } from '../validation/index.js'
import { type Announcement, parseAnnouncement } from './announcement.js'
import type { BloomFilter } from './bloom_filter.js'
import { CoalescedCall } from './coalesced_call.js'
import { type BloomLayout, toGeneration } from './layout.js'
import type { BitPositions } from './positions.js'
import { loadReadyBits } from './replica_load.js'
import { ShardBitmaps } from './shard_bitmaps.js'

export interface BloomReplicaOptions {
  /** The filter to replicate; its client serves the syncs and the fallback queries. */
  filter: BloomFilter
  /**
   * Client for loading the bits (m / 8 bytes per load): give one with a roomier command timeout
   * than the read path's. @default the filter's client
   */
  loadRedis?: RedisClient
  /** Deadline of each sync read and fallback query (ms). @default DEADLINE_DEFAULTS (50 ms idle, 2,000 ms wall) */
  deadline?: Deadline
  /** Idle event-loop time (ms) to wait for announced adds after a sync found the replica behind (time the process spent busy does not count; at most the deadline's `maxWaitMs` of wall time). @default 50 */
  catchUpWaitMs?: number
  /** Announcements buffered while a load runs; past this the load starts over. @default 10_000 */
  maxBufferedMessages?: number
  /** Cap of the first wait (ms) before retrying a failed or not-ready load (full jitter); doubles up to `retryMaxMs`. @default 100 */
  retryBaseMs?: number
  /** Longest wait (ms) between load attempts. @default 5_000 */
  retryMaxMs?: number
  /** Where a failed load of the bits is logged (warn; it is retried); see {@link Logger}. @default none (the `loadError` event only) */
  logger?: Logger
}

/** Defaults of {@link BloomReplicaOptions}, in one place. */
/** Syncs a query tries when the previous one only stalled with this process (not a Redis failure). */
const SYNC_ATTEMPTS = 5

export const BLOOM_REPLICA_DEFAULTS = {
  catchUpWaitMs: 50,
  maxBufferedMessages: 10_000,
  retryBaseMs: 100,
  retryMaxMs: 5_000,
} as const

/**
 * `not-loaded`: no bits yet (queries go to Redis); `live`: answering from the bits, announcements
 * applied in order; `reloading`: loading afresh while still answering from the old bits; `closed`.
 */
export type BloomReplicaState = 'not-loaded' | 'live' | 'reloading' | 'closed'

/** Why a load started. */
export type BloomReplicaReloadReason = 'start' | 'gap' | 'generation' | 'reconnect' | 'overflow' | 'retry'

export interface BloomReplicaEvents {
  state: [BloomReplicaState]
  reload: [{ reason: BloomReplicaReloadReason }]
  /** A load failed (Redis error or unstable generations); it is retried with backoff. */
  loadError: [unknown]
}

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
    /** Items answered "maybe" because the sync failed. */
    syncFailures: 0,
    /** Queries that waited for announcements after a sync. */
    catchUpWaits: 0,
    reloads: 0,
  }
  private readonly filter: BloomFilter
  private readonly layout: BloomLayout
  private readonly positions: BitPositions
  private readonly redis: RedisClient
  private readonly loadRedis: RedisClient
  private readonly subscriber: Redis | Cluster
  private readonly deadline: Deadline
  private readonly o: {
    catchUpWaitMs: number
    maxBufferedMessages: number
    retryBaseMs: number
    retryMaxMs: number
  }
  private readonly sync: CoalescedCall<{ ready: number | null; addSeq: number }>
  private readonly closing = new AbortController()
  private current: BloomReplicaState = 'not-loaded'
  private bits: ShardBitmaps | undefined
  private generation = 0
  private appliedSeq = 0
  private lastReadSeq = 0
  /** Announcements received while a load runs; undefined when no load runs. */
  private buffer: Announcement[] | undefined
  private loading: Promise<void> | undefined
  private loadAgain: BloomReplicaReloadReason | undefined
  /** Aborts the wait between load attempts (a generation was announced: load now). */
  private retryWait: AbortController | undefined
  private readonly caughtUpWaiters = new Set<() => void>()
  private connectedOnce = false
  /** Resolves {@link start}'s wait after the first load attempt. */
  private attempted: (() => void) | undefined
  private readonly logger: Logger | undefined

  /** @throws {InvalidArgumentError} on out-of-range options. */
  constructor(options: BloomReplicaOptions) {
    super()
    this.filter = options.filter
    this.logger = options.logger
    const source = options.filter.replicaSource()
    this.layout = source.layout
    this.positions = source.positions
    this.redis = source.redis
    this.loadRedis = options.loadRedis ?? source.redis
    this.deadline = checkDeadline('deadline', options.deadline ?? DEADLINE_DEFAULTS)
    this.o = {
      catchUpWaitMs: nonNegativeInteger(
        'catchUpWaitMs',
        options.catchUpWaitMs ?? BLOOM_REPLICA_DEFAULTS.catchUpWaitMs,
      ),
      maxBufferedMessages: nonNegativeInteger(
        'maxBufferedMessages',
        options.maxBufferedMessages ?? BLOOM_REPLICA_DEFAULTS.maxBufferedMessages,
      ),
      retryBaseMs: nonNegativeInteger(
        'retryBaseMs',
        options.retryBaseMs ?? BLOOM_REPLICA_DEFAULTS.retryBaseMs,
      ),
      retryMaxMs: nonNegativeInteger('retryMaxMs', options.retryMaxMs ?? BLOOM_REPLICA_DEFAULTS.retryMaxMs),
    }
    this.sync = new CoalescedCall(async () => {
      const [ready, addSeq] = await withinDeadline(
        this.redis.hmget(this.layout.meta, 'ready', 'addseq'),
        this.deadline,
        'bloom replica sync',
      )
      return { ready: toGeneration(ready), addSeq: Number(addSeq ?? 0) }
    })
    // Like the cache bus: an offline queue (SUBSCRIBE may precede the connection), no command timeout.
    this.subscriber = openDedicatedConnection(this.redis, { offlineQueue: true, commandTimeoutMs: null })
    this.subscriber.on('ready', () => {
      // anything published while the connection was down is lost
      if (this.connectedOnce) this.reload('reconnect')
      this.connectedOnce = true
    })
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.layout.channel) return
      const announcement = parseAnnouncement(message)
      if (announcement !== undefined) this.receive(announcement)
    })
  }

  /** The replica's state (see {@link BloomReplicaState}). */
  get state(): BloomReplicaState {
    return this.current
  }

  /** Generation of the bits (0 before the first load) and the last add applied to them. */
  get position(): { generation: number; appliedSeq: number } {
    return { generation: this.generation, appliedSeq: this.appliedSeq }
  }

  /** Adds announced (as of the last sync) that the bits do not hold yet; 0 when caught up. */
  get lag(): number {
    return Math.max(0, this.lastReadSeq - this.appliedSeq)
  }

  /** Syncs (HMGETs) sent so far. */
  get syncs(): number {
    return this.sync.sent
  }

  /**
   * Subscribes and loads. Resolves after the first load attempt (live, or not ready / failed:
   * retried in the background with backoff until it loads or the replica closes). Never rejects.
   */
  async start(): Promise<void> {
    const attempted = new Promise<void>((resolve) => {
      this.attempted = resolve
    })
    this.reload('start')
    await attempted
  }

  /**
   * One answer per item: `false` = definitely absent, `true` = maybe present (see the class doc
   * for when "absent" is trusted). Never throws: Redis trouble answers "maybe".
   */
  async mightContain(items: readonly string[]): Promise<boolean[]> {
    const bits = this.bits
    if (bits === undefined || this.current === 'closed') return this.remote(items)
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
    if (this.current === 'live' && read.ready !== null && read.ready !== this.generation)
      this.reload('generation')
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
    if (this.current === 'closed') return
    this.closing.abort()
    this.attempted?.()
    this.setState('closed')
    this.subscriber.disconnect()
    for (const wake of [...this.caughtUpWaiters]) wake()
  }

  /**
   * The bits once they are live in `generation` with every add ≤ `addSeq` applied, waiting up to
   * `catchUpWaitMs`; undefined when they are not by then.
   */
  private async caughtUpWith(generation: number, addSeq: number): Promise<ShardBitmaps | undefined> {
    const caughtUp = () =>
      this.current === 'live' && this.generation === generation && this.appliedSeq >= addSeq
    if (caughtUp()) return this.bits
    if (this.o.catchUpWaitMs === 0 || this.current === 'closed') return undefined
    this.stats.catchUpWaits++
    let wake = () => {}
    const arrived = new Promise<void>((resolve) => {
      wake = () => {
        if (caughtUp() || this.current === 'closed') resolve()
      }
      this.caughtUpWaiters.add(wake)
    })
    // on the idle clock too: a busy loop delays the announcements, it does not lose them
    const wait = {
      timeoutMs: this.o.catchUpWaitMs,
      maxWaitMs: Math.max(this.o.catchUpWaitMs, this.deadline.maxWaitMs),
    }
    try {
      await withinDeadline(arrived, wait, 'bloom replica catch-up')
    } catch {
      // not caught up in time: the caller asks the filter in Redis
    } finally {
      this.caughtUpWaiters.delete(wake)
    }
    return caughtUp() ? this.bits : undefined
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

  private receive(announcement: Announcement): void {
    if (this.current === 'closed') return
    if (this.buffer !== undefined) {
      // a load runs: keep the message for it; the old bits still answer, so widen them too
      if (announcement.kind === 'add') this.bits?.addAll(announcement.items)
      this.buffer.push(announcement)
      if (this.buffer.length > this.o.maxBufferedMessages) {
        this.buffer = []
        this.loadAgain = 'overflow'
      }
      return
    }
    if (announcement.kind === 'generation') {
      // every switch reloads: after a data loss a new generation may reuse this one's number
      this.reload('generation')
      return
    }
    this.bits?.addAll(announcement.items)
    if (announcement.seq === this.appliedSeq + 1) {
      this.appliedSeq = announcement.seq
      this.wakeCaughtUp()
    } else {
      // missed adds (or numbering restarted after a data loss): the bits may lack some
      this.reload('gap')
    }
  }

  /** Starts a load, or asks the running one to load again once it finishes. */
  private reload(reason: BloomReplicaReloadReason): void {
    if (this.current === 'closed') return
    if (this.loading !== undefined) {
      this.loadAgain ??= reason
      this.retryWait?.abort()
      return
    }
    this.loading = this.loadUntilLive(reason).finally(() => {
      this.loading = undefined
    })
  }

  private async loadUntilLive(firstReason: BloomReplicaReloadReason): Promise<void> {
    let reason: BloomReplicaReloadReason = firstReason
    for (let failures = 0; !this.closing.signal.aborted; ) {
      this.stats.reloads++
      this.emit('reload', { reason })
      this.loadAgain = undefined
      this.buffer = []
      if (this.bits !== undefined) this.setState('reloading')
      try {
        // subscribed (SUBSCRIBE answered) before `addseq` is read: no announcement after it is missed
        await this.subscriber.subscribe(this.layout.channel)
        const loaded = await loadReadyBits(this.loadRedis, this.layout)
        if (this.closing.signal.aborted) return
        if (loaded === null) {
          // not ready: wait, unless a generation was published meanwhile
          reason = this.buffer?.some((a) => a.kind === 'generation') ? 'generation' : 'retry'
          this.bits = undefined
          this.buffer = undefined
          this.setState('not-loaded')
        } else if (this.loadAgain === undefined && this.commit(loaded)) {
          this.attempted?.()
          return
        } else reason = this.loadAgain ?? 'gap'
      } catch (error) {
        this.buffer = undefined
        this.emit('loadError', error)
        this.logger?.warn(
          { primitive: 'bloomReplica', filter: this.filter.name, err: error },
          `bloom replica ${this.filter.name}: loading the bits failed, retrying`,
        )
        reason = 'retry'
      }
      this.attempted?.()
      this.attempted = undefined
      if (reason === 'retry') {
        failures++
        const waitMs = fullJitterDelayMs(failures - 1, this.o.retryBaseMs, this.o.retryMaxMs)
        this.retryWait = new AbortController()
        const signal = AbortSignal.any([this.closing.signal, this.retryWait.signal])
        await sleep(waitMs, undefined, { signal, ref: false }).catch(() => undefined)
        this.retryWait = undefined
      }
    }
  }

  /**
   * Applies the buffered announcements numbered after the load to its bits and goes live; false
   * (load again) when they skip a number or a later generation was announced.
   */
  private commit(loaded: { generation: number; addSeq: number; bitmaps: Uint8Array[] }): boolean {
    const bits = new ShardBitmaps(
      this.positions,
      this.layout.shards,
      this.layout.bitsPerShard,
      loaded.bitmaps,
    )
    let seq = loaded.addSeq
    for (const announcement of this.buffer ?? []) {
      if (announcement.kind === 'generation') {
        if (announcement.generation > loaded.generation) return false
        continue
      }
      if (announcement.seq <= seq) continue // already in the loaded bits
      if (announcement.seq !== seq + 1) return false
      bits.addAll(announcement.items)
      seq = announcement.seq
    }
    this.bits = bits
    this.generation = loaded.generation
    this.appliedSeq = seq
    this.buffer = undefined
    this.setState('live')
    this.wakeCaughtUp()
    return true
  }

  private wakeCaughtUp(): void {
    for (const wake of [...this.caughtUpWaiters]) wake()
  }

  private setState(state: BloomReplicaState): void {
    if (this.current === state || this.current === 'closed') return
    this.current = state
    this.emit('state', state)
  }
}
