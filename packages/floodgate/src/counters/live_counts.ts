import { LRUCache } from 'lru-cache'
import { canonicalId } from '../interactions/ids.js'
import type { InteractionKeys } from '../interactions/keys.js'
import type { ClientTracking } from '../tracking/index.js'
import { CountsBatcher, type SentBatch } from './counts_batcher.js'
import { FallbackCalls } from './live_counts_fallback.js'
import {
  type FallbackCounts,
  type LiveCountsOptions,
  liveCountsEntryBytes,
  type ResolvedLiveCountsOptions,
  resolveLiveCountsOptions,
} from './live_counts_options.js'
import {
  type LiveCountsEntry as Entry,
  emptyLiveCountsStats,
  type LiveCountsRead,
  type LiveCountsStats,
  type LiveItemCounts,
} from './live_counts_types.js'
import {
  type CountsBatchRead,
  type CountsReader,
  type CountsUnavailableReason,
  flagKey,
} from './read_counts.js'

/**
 * Live counts from an in-process LRU (bounded by entries and bytes) in front of the Redis read
 * (SPEC §4 "Reading counts"): with `tracking` established, kept until Redis invalidates them;
 * otherwise anonymous reads are kept `maxAgeMs`. Misses are batched into one pipelined read
 * ({@link CountsBatcher}, singleflight per id); reads with a viewer always ask Redis;
 * {@link noteWrite} shows this process's own writes at once; while Redis cannot answer, counts
 * younger than `maxStaleMs` are served stale and the rest come from the fallback, at most one call
 * per id per `maxAgeMs`. Never throws for Redis or fallback trouble. See README.md beside this
 * file, "Live counts".
 */
export class LiveCounts {
  readonly options: ResolvedLiveCountsOptions
  readonly stats: LiveCountsStats = emptyLiveCountsStats()
  /** The server-assisted caching the counts are read through, when given. */
  readonly tracking: ClientTracking | undefined
  private readonly reader: CountsReader
  private readonly entries: LRUCache<string, Entry>
  private readonly batcher: CountsBatcher
  private readonly fallback: FallbackCalls
  /** Ids this process wrote while a Redis read of them was in flight: that read must not be stored. */
  private readonly writtenInFlight = new Set<string>()
  private readonly keys: InteractionKeys
  private readonly epochKey: string
  private readonly stopListening: (() => void) | undefined

  /** @throws {InvalidArgumentError} for a bound out of range. */
  constructor(options: LiveCountsOptions) {
    this.options = resolveLiveCountsOptions(options)
    this.fallback = new FallbackCalls(options.fallback, this.stats)
    this.entries = new LRUCache<string, Entry>({
      max: this.options.maxEntries,
      maxSize: this.options.maxBytes,
      sizeCalculation: (_entry, id) => liveCountsEntryBytes(id),
    })
    this.tracking = options.tracking
    this.reader = options.reader
    const keys = options.reader.keys
    this.keys = keys
    this.epochKey = keys.epoch()
    this.batcher = new CountsBatcher(
      options.reader,
      this.options.now,
      (batch, read) => this.store(batch, read),
      (ids) => this.tracking?.begin(this.keysOf(ids)),
    )
    this.stopListening = this.tracking?.onInvalidate((changed) => this.onInvalidate(changed))
  }

  /** Stops listening to the tracking's invalidations (it does not close the tracking). Idempotent. */
  close(): void {
    this.stopListening?.()
  }

  /** Entries kept now. */
  get size(): number {
    return this.entries.size
  }

  /** Their estimated bytes. */
  get bytes(): number {
    return this.entries.calculatedSize
  }

  /**
   * Counts (and, with a viewer, its `liked` / `favorited`) of every id, keyed by canonical id.
   * @throws {InvalidArgumentError} for an id or viewer that is not a positive 64-bit integer.
   */
  async read(itemIds: readonly string[], viewerUserId?: string): Promise<LiveCountsRead> {
    // one id (a video page) needs no Set to drop duplicates
    const ids =
      itemIds.length === 1
        ? [canonicalId('itemIds', itemIds[0]!)]
        : [...new Set(itemIds.map((id) => canonicalId('itemIds', id)))]
    const viewer = viewerUserId === undefined ? undefined : canonicalId('viewerUserId', viewerUserId)
    const counts = new Map<string, LiveItemCounts>()
    const now = this.options.now()
    const missing: string[] = []
    const loading: string[] = []
    for (const id of ids) {
      const local = viewer === undefined ? this.local(id, now) : undefined
      if (local !== undefined) counts.set(id, local)
      else if (viewer === undefined && this.fallback.loading(id)) {
        loading.push(id) // Redis just failed for it: wait for that fallback, do not ask Redis again
      } else missing.push(id)
    }
    if (loading.length > 0) await this.whenUnavailable(loading, undefined, counts)
    if (missing.length === 0) return { counts }
    // a read that cannot succeed now is not sent: no wait for the next batch (an event-loop turn,
    // 15-25 ms on a loaded box) before the stale counts or the fallback answer
    const down = this.reader.unavailableNow(this.tracking?.established !== true)
    if (down !== undefined) {
      this.stats.redisFailures++
      this.failed(missing, now)
      await this.whenUnavailable(missing, viewer, counts)
      return { counts, unavailable: down }
    }
    const reads = await Promise.all(this.batcher.request(missing, viewer))
    const failed: string[] = []
    let unavailable: CountsUnavailableReason | undefined
    for (const id of missing) {
      const read = reads.find((r) => r.ok && r.counts.has(id))
      if (read?.ok) {
        const c = read.counts.get(id)!
        const served: LiveItemCounts = { ...c, source: 'redis', fetchedAtMs: now, stale: false }
        if (viewer !== undefined) Object.assign(served, read.flags.get(flagKey(id, viewer)))
        counts.set(id, served)
        continue
      }
      failed.push(id)
      for (const r of reads) if (!r.ok) unavailable ??= r.reason
    }
    if (failed.length === 0) return { counts }
    await this.whenUnavailable(failed, viewer, counts)
    return { counts, unavailable: unavailable ?? 'redis-error' }
  }

  /**
   * Starts the anonymous counts read of `itemId` now, for a caller that will need them after
   * another round trip (a video's L2 read or load): its {@link read} or {@link peek} then finds
   * them kept, or joins this read, instead of waiting a round trip of its own. Nothing is sent
   * when fresh counts are kept, a read of them is in flight, or Redis cannot answer now; when the
   * read fails, the fallback is not called: that is left to the read that needs the counts.
   * @throws {InvalidArgumentError} for an id that is not a positive 64-bit integer.
   */
  prefetch(itemId: string): void {
    const id = canonicalId('itemId', itemId)
    const entry = this.entries.peek(id)
    if (entry !== undefined && this.fresh(entry, this.options.now())) return
    if (this.batcher.isInFlight(id) || this.fallback.loading(id)) return
    if (this.reader.unavailableNow(this.tracking?.established !== true) !== undefined) return
    // the Redis read alone (store() keeps its answer): the caller may yet be refused, so a failed
    // read must not reach the fallback (PostgreSQL) on its behalf
    Promise.all(this.batcher.request([id], undefined)).catch(() => undefined)
  }

  /**
   * The counts {@link read} would serve for `itemId` right now without asking Redis or the
   * fallback (same freshness rules, same `localHits` / `trackedHits` stats), synchronously and
   * without collections; `undefined` when `read` would have to ask: not kept, not fresh, or a
   * viewer is given (its `liked` / `favorited` are not kept in process: such reads ask Redis).
   * @throws {InvalidArgumentError} for an id or viewer that is not a positive 64-bit integer.
   */
  peek(itemId: string, viewerUserId?: string): LiveItemCounts | undefined {
    const id = canonicalId('itemId', itemId)
    if (viewerUserId !== undefined) {
      canonicalId('viewerUserId', viewerUserId)
      return undefined
    }
    return this.local(id, this.options.now())
  }

  /**
   * This process's write was acknowledged: `count` (the write's answer, e.g. SCARD after a like)
   * replaces that field of the entry, so this process shows the write at once.
   * @throws {InvalidArgumentError} for an id that is not a positive 64-bit integer.
   */
  noteWrite(itemId: string, field: 'likes' | 'favorites' | 'plays', count: number): void {
    const id = canonicalId('itemId', itemId)
    if (this.batcher.isInFlight(id)) this.writtenInFlight.add(id)
    const entry = this.entries.get(id)
    if (entry) entry[field] = count
  }

  /** The anonymous counts of `id` kept in process if still fresh (counted as a local hit), else undefined. */
  private local(id: string, now: number): LiveItemCounts | undefined {
    const entry = this.entries.get(id)
    if (entry === undefined || !this.fresh(entry, now)) return undefined
    this.stats.localHits++
    if (entry.trackedGen !== 0) this.stats.trackedHits++
    return this.serve(entry, now)
  }

  /**
   * Answerable without Redis: tracked and still valid; or checked less than `maxAgeMs` ago, unless
   * tracking is on its way back (then only a failed read holds Redis off for `maxAgeMs`: what is
   * read meanwhile is not tracked, and serving it for `maxAgeMs` would serve changes late).
   */
  private fresh(entry: Entry, now: number): boolean {
    if (entry.trackedGen !== 0) return this.trackedValid(entry)
    if (this.tracking?.recovering && !entry.failed) return false
    return now - entry.checkedAtMs < this.options.maxAgeMs
  }

  private trackedValid(entry: Entry): boolean {
    return (
      entry.trackedGen !== 0 &&
      this.tracking?.established === true &&
      entry.trackedGen === this.tracking.generation
    )
  }

  /**
   * The keys a read of `ids` depends on: the epoch marker and each item's counted keys (bucket 0
   * and the meta of both memberships, which every toggle writes, and the play counter).
   */
  private keysOf(ids: Iterable<string>): string[] {
    const out = [this.epochKey]
    for (const id of ids) out.push(...this.countedKeys(id))
    return out
  }

  private countedKeys(id: string): string[] {
    const keys = this.keys
    return [
      keys.likes(id),
      keys.memberMeta('likes', id),
      keys.favorites(id),
      keys.memberMeta('favorites', id),
      keys.plays(id),
    ]
  }

  private onInvalidate(changed: readonly string[] | null): void {
    if (changed === null) {
      // the tracking generation already moved on: no tracked entry is valid any more
      this.stats.trackingFlushes++
      return
    }
    for (const key of changed) {
      if (key === this.epochKey) {
        this.stats.trackingFlushes++
        for (const entry of this.entries.values()) this.outdate(entry)
        continue
      }
      const id = this.keys.countedItemOf(key)
      const entry = id === undefined ? undefined : this.entries.peek(id)
      if (!entry) continue
      this.stats.invalidations++
      this.outdate(entry)
    }
  }

  /** Redis said it changed: read it again on the next request; serve it only stale meanwhile. */
  private outdate(entry: Entry): void {
    entry.trackedGen = 0
    entry.checkedAtMs = Number.NEGATIVE_INFINITY
    entry.changed = true
  }

  private serve(entry: Entry, now: number): LiveItemCounts {
    const stale =
      entry.source === 'fallback' ||
      entry.changed ||
      (!this.trackedValid(entry) && now - entry.fetchedAtMs >= this.options.maxAgeMs)
    if (stale) this.stats.staleServes++
    return {
      likes: entry.likes,
      favorites: entry.favorites,
      plays: entry.plays,
      source: entry.source,
      fetchedAtMs: entry.fetchedAtMs,
      stale,
    }
  }

  /** Called once per Redis read, before its callers resume. */
  private store(batch: SentBatch, read: CountsBatchRead): void {
    this.stats.redisBatches++
    this.stats.redisIds += batch.ids.size
    const now = this.options.now()
    if (!read.ok) {
      this.stats.redisFailures++
      for (const id of batch.ids) this.writtenInFlight.delete(id)
      this.failed(batch.ids, now)
      return
    }
    const tracked = batch.tracked
    for (const [id, c] of read.counts) {
      // a write acknowledged while this read was in flight is newer than its answer
      if (this.writtenInFlight.delete(id)) continue
      // an invalidation that overtook the reply: the answer is already outdated, do not keep it as fresh
      const kept =
        tracked !== undefined && [this.epochKey, ...this.countedKeys(id)].every((k) => tracked.unchanged(k))
      const changed = tracked !== undefined && !kept
      this.entries.set(id, {
        likes: c.likes,
        favorites: c.favorites,
        plays: c.plays,
        source: 'redis',
        fetchedAtMs: batch.sentAtMs,
        checkedAtMs: changed ? Number.NEGATIVE_INFINITY : batch.sentAtMs,
        trackedGen: kept ? tracked.generation : 0,
        changed,
        failed: false,
      })
    }
  }

  /** Redis could not answer for `ids`: their entries keep their counts; Redis is asked again after maxAgeMs. */
  private failed(ids: Iterable<string>, now: number): void {
    for (const id of ids) {
      const entry = this.entries.get(id)
      if (!entry) continue
      entry.checkedAtMs = now
      entry.trackedGen = 0
      entry.failed = true
    }
  }

  /** Counts read from Redis less than `maxStaleMs` ago, or a fallback answer less than `maxAgeMs` old. */
  private usable(id: string, now: number): Entry | undefined {
    const entry = this.entries.get(id)
    if (!entry) return undefined
    const bound = entry.source === 'redis' ? this.options.maxStaleMs : this.options.maxAgeMs
    return now - entry.fetchedAtMs < bound ? entry : undefined
  }

  private async whenUnavailable(
    ids: readonly string[],
    viewer: string | undefined,
    counts: Map<string, LiveItemCounts>,
  ): Promise<void> {
    const now = this.options.now()
    const load: string[] = []
    for (const id of ids) {
      const entry = this.usable(id, now)
      if (entry) counts.set(id, this.serve(entry, now))
      else load.push(id)
    }
    if (viewer !== undefined) {
      const found = await this.fallback.forViewer(ids, viewer)
      for (const id of ids) {
        const c = found?.get(id)
        if (!c) continue
        if (load.includes(id)) counts.set(id, this.serve(this.keepFallback(id, c), this.options.now()))
        const served = counts.get(id)
        // the flags come from the fallback, which may lag Redis: the answer is stale as a whole
        if (served)
          Object.assign(served, { liked: c.liked === true, favorited: c.favorited === true, stale: true })
      }
      return
    }
    if (load.length === 0) return
    const found = await this.fallback.shared(load, (id, c) => this.keepFallback(id, c))
    const at = this.options.now()
    for (const id of load) {
      const entry = this.entries.get(id)
      if (entry && found.has(id)) counts.set(id, this.serve(entry, at))
    }
  }

  private keepFallback(id: string, c: FallbackCounts): Entry {
    const now = this.options.now()
    const entry: Entry = {
      likes: c.likes,
      favorites: c.favorites,
      plays: c.plays,
      source: 'fallback',
      fetchedAtMs: now,
      checkedAtMs: now,
      trackedGen: 0,
      changed: false,
      failed: false,
    }
    this.entries.set(id, entry)
    return entry
  }
}
