import { setTimeout as sleep } from 'node:timers/promises'
import { fullJitterDelayMs } from '../backoff/index.js'
import { openDedicatedConnection } from '../redis/dedicated_connection.js'
import type { RedisClient } from '../redis/types.js'
import { logConsumerEvent } from './consumer_log.js'
import {
  ackEntries,
  autoClaimRound,
  createGroups,
  heartbeatMembers,
  readGroup,
  readOwnPending,
  rejectEntry,
} from './group_commands.js'
import { type IdleStreams, trimAndMeasureLag } from './lag.js'
import { ConsumerMetrics } from './metrics.js'
import {
  type ResolvedConsumerOptions,
  resolveConsumerOptions,
  type StreamConsumerOptions,
} from './options.js'
import { ReadAhead, readNewEntries } from './read_ahead.js'
import type { ConsumerEvent, ConsumerStats, LagSnapshot, StreamEntry, StreamSource } from './types.js'

/**
 * One consumer of a Redis Streams consumer group over several streams (the
 * partitions), with at-least-once delivery made safe by an idempotent handler:
 *
 * - reads batches with XREADGROUP (a non-blocking read over all its streams — one command on a
 *   single node, one per stream pipelined per node on Redis Cluster — then one blocking read
 *   when all were empty; on Redis Cluster, a short poll instead);
 * - while a full batch is applied, reads the next one (at most one batch ahead, non-blocking),
 *   so its own CPU and the database's overlap;
 * - hands each batch to the handler, then XACKs it; a transient failure (the
 *   database is down) retries the same batch with full-jitter backoff, never
 *   acknowledging it; a poison failure bisects the batch to isolate the bad
 *   entry, which stays pending;
 * - claims entries idle for `claimIdleMs` on any consumer (a crashed one)
 *   with XAUTOCLAIM (ids deleted meanwhile are dropped from the PEL by Redis 7);
 * - moves an entry that failed as poison after `maxDeliveries` deliveries to
 *   the dead-letter stream, atomically with its XACK;
 * - trims every stream below the oldest entry still pending or undelivered
 *   (never a pending one), and publishes lag metrics;
 * - with `membersKey`, shares the streams among the group's live consumers
 *   (a heartbeat each `maintenanceIntervalMs`), reading new entries only from
 *   its own: consumers of one group then apply different partitions at once
 *   instead of all applying every partition and queueing on the same rows;
 *   a member's streams whose new entries wait `helpAfterMs` are read by the
 *   others too until caught up (a stalled member delays nobody for long).
 *
 * It uses its own connection (a duplicate of the given client) so its blocking
 * reads never delay the caller's commands.
 */
export class StreamGroupConsumer {
  readonly options: ResolvedConsumerOptions
  readonly stats: ConsumerStats = {
    applied: 0,
    batches: 0,
    claimed: 0,
    deletedWhilePending: 0,
    deadLettered: 0,
    rejected: 0,
    released: 0,
    transientFailures: 0,
  }
  private readonly redis: RedisClient
  private readonly metrics: ConsumerMetrics | undefined
  private readonly claimCursors = new Map<string, string>()
  /** Streams this consumer reads new entries from: all, or (with `membersKey`) its assigned share. */
  private assigned: readonly StreamSource[]
  /** With `membersKey`: other members' streams that are behind by `helpAfterMs`, read too until caught up. */
  private helping: readonly StreamSource[] = []
  private memberCount = 0
  private readonly abort = new AbortController()
  private running = false
  private nextMaintenance = 0
  /** Streams the last trim found idle: probed, not trimmed, until they change (see {@link IdleStreams}). */
  private readonly idleStreams: IdleStreams = new Map()
  /** When the next maintenance trims every stream again, idle or not (`idleRecheckMs`). */
  private nextFullTrim = 0
  private loop: Promise<void> | undefined
  private readonly readAhead = new ReadAhead()
  /**
   * Set by a Redis error or a reconnect: entries delivered to this consumer may have lost their
   * XACK (a failover's promoted replica may lack it), so re-read its own pending entries at once
   * instead of leaving them to another consumer's idle claim (`claimIdleMs`).
   */
  private ownPendingDue = false

  /** @throws {InvalidArgumentError} on invalid options. */
  constructor(redis: RedisClient, options: StreamConsumerOptions) {
    this.options = resolveConsumerOptions(options)
    this.redis = duplicate(redis, this.options.blockMs)
    let connected = false
    this.redis.on('ready', () => {
      if (connected) this.ownPendingDue = true
      connected = true
    })
    // with a member set, nothing is read before the first heartbeat tells which streams are ours
    this.assigned = this.options.membersKey === undefined ? this.options.sources : []
    this.metrics = this.options.registry
      ? new ConsumerMetrics(this.options.registry, this.options.metricPrefix, this.options.group)
      : undefined
  }

  /** This consumer's name in the group. */
  get name(): string {
    return this.options.consumerName
  }

  /** The streams assigned to this consumer (every stream without `membersKey`). */
  get assignedStreams(): readonly string[] {
    return this.assigned.map((s) => s.stream)
  }

  /** With `membersKey`: other members' streams it also reads now, since they are `helpAfterMs` behind. */
  get helpingStreams(): readonly string[] {
    return this.helping.map((s) => s.stream)
  }

  /**
   * With `membersKey`: how many consumers of the group were live (heartbeat within `memberTtlMs`)
   * at this consumer's last heartbeat, itself included; 0 before the first one or without `membersKey`.
   */
  get liveMembers(): number {
    return this.memberCount
  }

  /** Starts the consume loop in the background. Calling it twice is a no-op. */
  start(): void {
    if (this.running || this.abort.signal.aborted) return
    this.running = true
    this.loop = this.run()
  }

  /**
   * Stops after the batch in progress (at most one blocking read, `blockMs`, later) and closes the
   * connection. A batch read ahead and not yet applied is handed back (its idle time set to
   * `claimIdleMs`), so any consumer's next claim round (every `claimIntervalMs`) takes it; other
   * unacknowledged entries (a batch whose apply failed) stay pending and are claimed by another
   * consumer after `claimIdleMs`.
   */
  async stop(): Promise<void> {
    this.running = false
    this.abort.abort()
    await this.loop
    // leave the member set at once, so the others take this consumer's streams without waiting for its TTL
    if (this.options.membersKey !== undefined) {
      await this.redis.call('ZREM', this.options.membersKey, this.name).catch(() => undefined)
    }
    await this.redis.quit().catch(() => this.redis.disconnect())
  }

  /** Creates the group on every stream (at id 0, with MKSTREAM) where it is missing. */
  async ensureGroups(): Promise<void> {
    await createGroups(this.redis, this.options.sources, this.options.group)
  }

  /** Trims acknowledged entries on every stream and reports the group's lag (also to the gauges). */
  maintain(): Promise<LagSnapshot> {
    return this.maintainStreams(false)
  }

  /**
   * {@link maintain}; with `skipIdle`, streams found idle since the last full trim are only
   * probed for a new entry (one pipelined XREVRANGE each) instead of trimmed.
   */
  private async maintainStreams(skipIdle: boolean): Promise<LagSnapshot> {
    if (!skipIdle) this.idleStreams.clear()
    const { lag, undeliveredAgesMs } = await trimAndMeasureLag(
      this.redis,
      this.options.sources,
      this.options.group,
      this.idleStreams,
    )
    this.metrics?.lag(lag)
    if (this.options.membersKey !== undefined) {
      // help with another member's streams whose new entries wait longer than helpAfterMs (their
      // owner is stalled or overloaded), until they are caught up: a slow member then delays its
      // partitions by about helpAfterMs, not by memberTtlMs
      const own = new Set(this.assigned)
      this.helping = this.options.sources.filter(
        (s, i) => !own.has(s) && (undeliveredAgesMs[i] ?? 0) >= this.options.helpAfterMs,
      )
    }
    return lag
  }

  private async maintainWhenDue(): Promise<void> {
    const now = Date.now()
    if (now < this.nextMaintenance) return
    this.nextMaintenance = now + this.options.maintenanceIntervalMs
    await this.heartbeat()
    // every idleRecheckMs a full trim, so whatever a probe cannot see (a group reset to an older
    // id, an entry deleted and re-added) is caught within that time
    const full = now >= this.nextFullTrim
    if (full) this.nextFullTrim = now + this.options.idleRecheckMs
    await this.maintainStreams(!full)
  }

  /**
   * With `membersKey`: beats this consumer's heartbeat, reads the live members and takes stream
   * `i` when member `i mod n` (members sorted by name) is this one.
   */
  private async heartbeat(): Promise<void> {
    const { membersKey, memberTtlMs, sources } = this.options
    if (membersKey === undefined) return
    const members = await heartbeatMembers(this.redis, membersKey, this.name, memberTtlMs)
    this.memberCount = members.length
    const assigned = sources.filter((_, i) => members[i % members.length] === this.name)
    const changed =
      assigned.length !== this.assigned.length || assigned.some((s, i) => s !== this.assigned[i])
    this.assigned = assigned
    if (changed)
      this.emit({ type: 'assigned', streams: assigned.map((s) => s.stream), members: members.length })
  }

  private async run(): Promise<void> {
    let failures = 0
    let nextClaim = 0
    let groupsReady = false
    while (this.running) {
      let phase: 'read' | 'claim' | 'maintain' = 'read'
      try {
        if (!groupsReady) {
          await this.ensureGroups()
          groupsReady = true
        }
        const now = Date.now()
        if (now >= nextClaim) {
          phase = 'claim'
          nextClaim = now + this.options.claimIntervalMs
          const claimed = await this.readAhead.without(await this.claim())
          for (let i = 0; i < claimed.length && this.running; i += this.options.batchSize) {
            await this.process(claimed.slice(i, i + this.options.batchSize))
          }
        }
        phase = 'maintain'
        await this.maintainWhenDue()
        phase = 'read'
        if (this.ownPendingDue) {
          // the re-read from id 0 covers a batch read ahead too
          await this.readAhead.discard()
          await this.rereadOwnPending()
        }
        const ahead = await this.readAhead.take()
        const batch = ahead !== undefined && ahead.length > 0 ? ahead : await this.readNew()
        // behind (a full batch): read the next one while this one is applied; not when keeping up,
        // where it would split the arrivals into twice as many small transactions
        if (this.options.readAhead && batch.length >= this.options.batchSize && this.running) {
          this.readAhead.start(() =>
            readNewEntries(this.redis, this.options.group, this.name, this.readSources(), this.readOptions),
          )
        }
        if (batch.length > 0) await this.process(batch)
        failures = 0
      } catch (error) {
        if (!this.running) break
        this.ownPendingDue = true
        this.idleStreams.clear()
        if (String((error as Error)?.message).includes('NOGROUP')) groupsReady = false
        this.emit({ type: 'error', phase, error })
        await this.pause(fullJitterDelayMs(failures++, this.options.backoffBaseMs, this.options.backoffMaxMs))
      }
    }
    this.stats.released += await this.readAhead.release(
      this.redis,
      this.options.group,
      this.name,
      this.options.claimIdleMs,
    )
  }

  private get readOptions(): { batchSize: number; compact: boolean } {
    return { batchSize: this.options.batchSize, compact: this.options.compactRead }
  }

  /** The streams to read new entries from: this consumer's own, and those it helps with. */
  private readSources(): readonly StreamSource[] {
    return this.helping.length > 0 ? [...this.assigned, ...this.helping] : this.assigned
  }

  /**
   * Non-blocking reads spread over this consumer's streams until the batch is full (see
   * {@link readNewEntries}); one blocking wait when all are empty.
   */
  private async readNew(): Promise<StreamEntry[]> {
    const { batchSize } = this.options
    const sources = this.readSources()
    if (sources.length === 0) {
      // more consumers than streams (or no heartbeat yet): nothing of ours to read
      await this.pause(this.redis.isCluster ? this.options.pollIntervalMs : this.options.blockMs)
      return []
    }
    const batch = await readNewEntries(this.redis, this.options.group, this.name, sources, this.readOptions)
    if (batch.length > 0 || !this.running) return batch
    if (this.redis.isCluster) {
      await this.pause(this.options.pollIntervalMs)
      return []
    }
    const count = Math.max(1, Math.ceil(batchSize / sources.length))
    return readGroup(
      this.redis,
      this.options.group,
      this.name,
      sources.map((s) => s.stream),
      count,
      this.options.blockMs,
    )
  }

  /**
   * Reads and applies this consumer's own pending entries on every stream (XREADGROUP from id 0,
   * page by page), then clears {@link ownPendingDue}; a Redis error leaves it set.
   */
  private async rereadOwnPending(): Promise<void> {
    const { group, batchSize } = this.options
    for (const { stream } of this.options.sources) {
      let afterId = '0'
      while (this.running) {
        const page = await readOwnPending(this.redis, group, this.name, stream, batchSize, afterId)
        if (page.entries.length > 0) await this.process(page.entries)
        if (page.items < batchSize || page.lastId === undefined) break
        afterId = page.lastId
      }
    }
    this.ownPendingDue = false
  }

  /** XAUTOCLAIM over every stream, resuming each stream's cursor from the previous round. */
  private async claim(): Promise<StreamEntry[]> {
    const { sources, group, claimIdleMs, batchSize } = this.options
    const { entries, deleted } = await autoClaimRound(this.redis, sources, group, this.name, {
      cursors: this.claimCursors,
      idleMs: claimIdleMs,
      count: batchSize,
    })
    if (entries.length > 0 || deleted > 0) {
      this.stats.claimed += entries.length
      this.stats.deletedWhilePending += deleted
      this.metrics?.claim(entries.length)
      this.emit({ type: 'claimed', count: entries.length, deleted })
    }
    return entries
  }

  /** Applies a batch: ack on success, backoff and retry on a transient error, bisect on a poison one. */
  private async process(entries: readonly StreamEntry[]): Promise<void> {
    if (entries.length === 0) return
    for (let attempt = 0; ; attempt++) {
      const started = performance.now()
      let failed: ReadonlyMap<StreamEntry, unknown>
      try {
        const outcome = await this.options.handler(entries)
        failed = new Map((outcome?.failed ?? []).map((f) => [f.entry, f.error]))
      } catch (error) {
        if (this.options.isPoison(error)) {
          if (entries.length === 1) return this.reject(entries[0]!, error)
          const middle = entries.length >> 1
          await this.process(entries.slice(0, middle))
          return this.process(entries.slice(middle))
        }
        this.stats.transientFailures++
        this.emit({ type: 'error', phase: 'apply', error })
        if (!this.running) return
        // keep trimming and the lag gauges current while the database is away
        await this.maintainWhenDue().catch((e: unknown) =>
          this.emit({ type: 'error', phase: 'maintain', error: e }),
        )
        await this.pause(fullJitterDelayMs(attempt, this.options.backoffBaseMs, this.options.backoffMaxMs))
        continue
      }
      const applied = entries.filter((e) => !failed.has(e))
      this.stats.batches++
      this.stats.applied += applied.length
      this.metrics?.appliedBatch(applied.length, (performance.now() - started) / 1000)
      await this.ack(applied)
      for (const [entry, error] of failed) await this.reject(entry, error)
      return
    }
  }

  /** XACK per stream. A failed ack only means a later redelivery, which the idempotent handler absorbs. */
  private async ack(entries: readonly StreamEntry[]): Promise<void> {
    try {
      await ackEntries(this.redis, this.options.group, entries)
    } catch (error) {
      this.ownPendingDue = true
      this.emit({ type: 'error', phase: 'ack', error })
    }
  }

  /** A poison entry: leave it pending for a later delivery, or dead-letter it after `maxDeliveries`. */
  private async reject(entry: StreamEntry, error: unknown): Promise<void> {
    try {
      const { sources, group, maxDeliveries } = this.options
      const { outcome, deliveries } = await rejectEntry(this.redis, sources, group, this.name, {
        entry,
        error,
        maxDeliveries,
      })
      const event = { stream: entry.stream, id: entry.id, deliveries, error }
      if (outcome === 'rejected') {
        this.stats.rejected++
        this.emit({ type: 'rejected', ...event })
      } else if (outcome === 'dead-lettered') {
        this.stats.deadLettered++
        this.metrics?.deadLetter()
        this.emit({ type: 'dead-lettered', ...event })
      }
    } catch (redisError) {
      this.emit({ type: 'error', phase: 'dead-letter', error: redisError })
    }
  }

  private emit(event: ConsumerEvent): void {
    logConsumerEvent(this.options.logger, this.options.group, this.name, event)
    try {
      this.options.onEvent?.(event)
    } catch {
      // an observer's bug must not stop the consumer
    }
  }

  private async pause(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.abort.signal }).catch(() => undefined)
  }
}

/** A dedicated connection whose command timeout outlasts a blocking read; it queues while reconnecting. */
function duplicate(client: RedisClient, blockMs: number): RedisClient {
  return openDedicatedConnection(client, {
    commandTimeoutMs: blockMs + 5000,
    offlineQueue: true,
    maxRetriesPerRequest: 1,
  })
}
