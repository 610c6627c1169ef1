import type { EventEmitter } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cluster, Redis } from 'ioredis'
import { fullJitterDelayMs } from '../backoff/index.js'
import type { Logger } from '../observability/index.js'
import { openSubscriberConnection } from '../redis/dedicated_connection.js'
import type { RedisClient } from '../redis/index.js'
import { type Announcement, parseAnnouncement } from './announcement.js'
import type { BloomLayout } from './layout.js'
import type { BitPositions } from './positions.js'
import { type LoadedBits, loadReadyBits } from './replica_load.js'
import type { BloomReplicaEvents, BloomReplicaReloadReason, BloomReplicaState } from './replica_options.js'
import { ShardBitmaps } from './shard_bitmaps.js'

export interface ReplicaFeedOptions {
  /** The filter's name (logs). */
  name: string
  layout: BloomLayout
  positions: BitPositions
  /** The filter's client: the subscriber connection is opened beside it. */
  redis: RedisClient
  /** Client the bits are loaded with. */
  loadRedis: RedisClient
  /** Validated {@link BloomReplicaOptions} values (see BLOOM_REPLICA_DEFAULTS). */
  maxBufferedMessages: number
  retryBaseMs: number
  retryMaxMs: number
  logger: Logger | undefined
  /** Where `state`, `reload` and `loadError` are emitted (the replica). */
  events: EventEmitter<BloomReplicaEvents>
  /** Counts the loads started (the replica's `stats`). */
  stats: { reloads: number }
  /** Called after adds were applied or a load went live: waiting queries look again. */
  onApplied: () => void
}

/**
 * Keeps a replica's bits in step with the filter in Redis (see {@link BloomReplica} for the
 * protocol): subscribes to the filter's channel, loads the ready generation, applies the announced
 * adds in order, and loads again on a gap, a generation switch, a subscriber reconnect or a buffer
 * overflow, retrying a failed load with full-jitter backoff until it goes live or is closed.
 */
export class ReplicaFeed {
  private readonly o: ReplicaFeedOptions
  private readonly subscriber: Redis | Cluster
  private readonly closing = new AbortController()
  private current: BloomReplicaState = 'not-loaded'
  private loadedBits: ShardBitmaps | undefined
  private loadedGeneration = 0
  private lastApplied = 0
  /** Announcements received while a load runs; undefined when no load runs. */
  private buffer: Announcement[] | undefined
  private loading: Promise<void> | undefined
  private loadAgain: BloomReplicaReloadReason | undefined
  /** Aborts the wait between load attempts (a generation was announced: load now). */
  private retryWait: AbortController | undefined
  private connectedOnce = false
  /** Resolves {@link start}'s wait after the first load attempt. */
  private attempted: (() => void) | undefined

  constructor(options: ReplicaFeedOptions) {
    this.o = options
    // re-subscribed by each reload, which a reconnect starts
    this.subscriber = openSubscriberConnection(options.redis)
    this.subscriber.on('ready', () => {
      // anything published while the connection was down is lost
      if (this.connectedOnce) this.reload('reconnect')
      this.connectedOnce = true
    })
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.o.layout.channel) return
      const announcement = parseAnnouncement(message)
      if (announcement !== undefined) this.receive(announcement)
    })
  }

  get state(): BloomReplicaState {
    return this.current
  }

  /** The bits queries are answered from; undefined before the first load. */
  get bits(): ShardBitmaps | undefined {
    return this.loadedBits
  }

  /** Generation of the bits (0 before the first load). */
  get generation(): number {
    return this.loadedGeneration
  }

  /** Number of the last add applied to the bits. */
  get appliedSeq(): number {
    return this.lastApplied
  }

  /** Subscribes and loads; resolves after the first load attempt (see BloomReplica.start). */
  async start(): Promise<void> {
    const attempted = new Promise<void>((resolve) => {
      this.attempted = resolve
    })
    this.reload('start')
    await attempted
  }

  /** Starts a load, or asks the running one to load again once it finishes. */
  reload(reason: BloomReplicaReloadReason): void {
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

  /** Stops loading and closes the subscriber connection. */
  close(): void {
    if (this.current === 'closed') return
    this.closing.abort()
    this.attempted?.()
    this.setState('closed')
    this.subscriber.disconnect()
  }

  private receive(announcement: Announcement): void {
    if (this.current === 'closed') return
    if (this.buffer !== undefined) {
      // a load runs: keep the message for it; the old bits still answer, so widen them too
      if (announcement.kind === 'add') this.loadedBits?.addAll(announcement.items)
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
    this.loadedBits?.addAll(announcement.items)
    if (announcement.seq === this.lastApplied + 1) {
      this.lastApplied = announcement.seq
      this.o.onApplied()
    } else {
      // missed adds (or numbering restarted after a data loss): the bits may lack some
      this.reload('gap')
    }
  }

  private async loadUntilLive(firstReason: BloomReplicaReloadReason): Promise<void> {
    let reason: BloomReplicaReloadReason = firstReason
    for (let failures = 0; !this.closing.signal.aborted; ) {
      this.o.stats.reloads++
      this.o.events.emit('reload', { reason })
      this.loadAgain = undefined
      this.buffer = []
      if (this.loadedBits !== undefined) this.setState('reloading')
      try {
        // subscribed (SUBSCRIBE answered) before `addseq` is read: no announcement after it is missed
        await this.subscriber.subscribe(this.o.layout.channel)
        const loaded = await loadReadyBits(this.o.loadRedis, this.o.layout)
        if (this.closing.signal.aborted) return
        if (loaded === null) {
          // not ready: wait, unless a generation was published meanwhile
          reason = this.buffer?.some((a) => a.kind === 'generation') ? 'generation' : 'retry'
          this.loadedBits = undefined
          this.buffer = undefined
          this.setState('not-loaded')
        } else if (this.loadAgain === undefined && this.commit(loaded)) {
          this.attempted?.()
          return
        } else reason = this.loadAgain ?? 'gap'
      } catch (error) {
        this.buffer = undefined
        this.o.events.emit('loadError', error)
        this.o.logger?.warn(
          { primitive: 'bloomReplica', filter: this.o.name, err: error },
          `bloom replica ${this.o.name}: loading the bits failed, retrying`,
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
  private commit(loaded: LoadedBits): boolean {
    const bits = new ShardBitmaps(
      this.o.positions,
      this.o.layout.shards,
      this.o.layout.bitsPerShard,
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
    this.loadedBits = bits
    this.loadedGeneration = loaded.generation
    this.lastApplied = seq
    this.buffer = undefined
    this.setState('live')
    this.o.onApplied()
    return true
  }

  private setState(state: BloomReplicaState): void {
    if (this.current === state || this.current === 'closed') return
    this.current = state
    this.o.events.emit('state', state)
  }
}
