import { LRUCache } from 'lru-cache'
import type { ClientTracking } from '../../tracking/index.js'
import type { NotFound } from '../not_found.js'
import { type L1Admission, L1Tracking, type TrackedL2Read } from './l1_tracking.js'

/** One L1 entry: the decoded value (or the not-found marker) and its logical expiry (ms epoch). */
export interface L1Entry<T> {
  value: T | NotFound
  /** Logical expiry (ms epoch) copied from the L2 envelope; past it the entry is not served from L1. */
  expiresAtMs: number
  /** The tracking generation it was read in (kept until Redis invalidates it); 0 when untracked. */
  trackedGen: number
  /** The L2 value key Redis tracks for it; undefined when untracked. */
  trackedKey: string | undefined
  /** Read time + the L1 TTL (ms epoch): an untracked entry's life, a tracked one's floor once tracking is not valid. */
  untrackedUntilMs: number
  /** The L1 TTL (ms) it would have had untracked. */
  ttlMs: number
  /** End of its life in L1 (ms, `performance.now()`): stored + its TTL, or + `trackedMaxAgeMs` when tracked. */
  evictAtMs: number
}

export type { L1Admission, TrackedL2Read }

/**
 * The in-process tier: an LRU (`lru-cache`) bounded by entry count and by
 * bytes (each entry weighs its encoded envelope length), with a short TTL.
 *
 * `epoch` increases on every invalidation this process learns about (its own
 * `invalidate()`, a bus message, a Redis tracking invalidation) and on `clear()`.
 * A load records the epoch before it starts and puts its result in L1 only if the
 * epoch did not move, so a load that raced an invalidation cannot re-insert the old value here.
 *
 * With `tracking` (server-assisted client-side caching, see {@link L1Tracking}), an entry read
 * from L2 on the tracked connection stays until Redis invalidates it or `trackedMaxAgeMs` passes,
 * instead of the TTL.
 */
export class L1Cache<T> {
  private lru: LRUCache<string, L1Entry<T>>
  private readonly newLru: () => LRUCache<string, L1Entry<T>>
  private readonly maxEntries: number
  private readonly tracked: L1Tracking | undefined
  private epochValue = 0

  constructor(options: {
    maxEntries: number
    maxBytes: number
    tracking?: ClientTracking | undefined
    trackedMaxAgeMs?: number
  }) {
    const tracked = options.tracking
      ? new L1Tracking(options.tracking, options.trackedMaxAgeMs ?? Number.POSITIVE_INFINITY, (ids) =>
          this.delete(ids),
        )
      : undefined
    this.tracked = tracked
    // lives are checked in get() (a monotonic clock, as lru-cache's TTL): lru-cache's own TTL
    // arms a timer every millisecond of hits to cache its clock reading
    this.maxEntries = options.maxEntries
    // no `max`: lru-cache would preallocate arrays of that length (20-30 ms for 200,000) on every
    // clear(); the entry bound is kept in set() instead
    this.newLru = () =>
      new LRUCache<string, L1Entry<T>>({
        maxSize: options.maxBytes,
        ...(tracked && {
          dispose: (entry: L1Entry<T>) => {
            if (entry.trackedKey !== undefined) tracked.forget(entry.trackedKey)
          },
        }),
      })
    this.lru = this.newLru()
  }

  get epoch(): number {
    return this.epochValue
  }

  get size(): number {
    return this.lru.size
  }

  get bytes(): number {
    return this.lru.calculatedSize
  }

  /** Entries kept because Redis tracks them (0 without tracking). */
  get trackedSize(): number {
    return this.tracked?.size ?? 0
  }

  /**
   * The entry, or undefined when absent, past its L1 TTL, past its logical expiry, or tracked
   * while tracking is not valid (lost, flushed or silent) and last proven fresh more than the L1
   * TTL ago (see {@link L1Tracking}): served as an untracked one would be, no longer.
   */
  get(key: string, nowMs: number): L1Entry<T> | undefined {
    const entry = this.lru.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAtMs <= nowMs || entry.evictAtMs <= performance.now()) {
      this.lru.delete(key)
      return undefined
    }
    if (entry.trackedGen !== 0 && nowMs >= entry.untrackedUntilMs && !this.tracked!.valid(entry.trackedGen))
      return this.tracked!.msSinceProven(entry.trackedGen) < entry.ttlMs ? entry : undefined
    return entry
  }

  /** True when L2 reads may go on a tracked connection ({@link beginRead}). */
  get tracks(): boolean {
    return this.tracked !== undefined
  }

  /**
   * Starts an L2 read of `valueKey` on the tracked connection; undefined without tracking or
   * while it is not established (read on the caller's client then). Pass the answer to
   * {@link settle} once the reply is in.
   */
  beginRead(valueKey: string): TrackedL2Read | undefined {
    return this.tracked?.begin(valueKey)
  }

  /** What the reply of a read begun with {@link beginRead} may become in L1 (see {@link L1Admission}). */
  settle(read: TrackedL2Read | undefined): L1Admission | undefined {
    return read === undefined ? undefined : this.tracked!.settle(read)
  }

  /**
   * Stores a value weighing `bytes`, for `ttlMs` (ms) capped by its logical expiry; a tracked
   * admission (still valid) stores it for `trackedMaxAgeMs` instead, served past `ttlMs` only
   * while its tracking stays valid; a `skip` stores nothing.
   */
  set(
    key: string,
    value: T | NotFound,
    expiresAtMs: number,
    bytes: number,
    ttlMs: number,
    nowMs: number,
    admission?: L1Admission,
  ): void {
    if (admission?.kind === 'skip') return
    const tracked = admission?.kind === 'tracked' ? admission : undefined
    if (tracked && !this.tracked!.valid(tracked.generation)) return
    const ttl = Math.min(tracked ? this.tracked!.maxAgeMs : ttlMs, expiresAtMs - nowMs)
    if (ttl <= 0) return
    const entry: L1Entry<T> = {
      value,
      expiresAtMs,
      trackedGen: tracked ? tracked.generation : 0,
      trackedKey: tracked?.valueKey,
      untrackedUntilMs: nowMs + ttlMs,
      ttlMs,
      evictAtMs: performance.now() + ttl,
    }
    this.lru.set(key, entry, { size: Math.max(1, bytes) })
    if (this.lru.size > this.maxEntries) this.lru.pop()
    if (tracked) this.tracked!.kept(tracked.valueKey, key)
  }

  /** Removes keys and moves the epoch. */
  delete(keys: readonly string[]): void {
    this.epochValue++
    for (const key of keys) this.lru.delete(key)
  }

  /**
   * Removes everything and moves the epoch, in O(1): a new LRU replaces the old one, whose
   * `clear()` visits every entry (40-60 ms of one turn for 200,000, when every instance is
   * busiest: the bus lost after a Redis restart).
   */
  clear(): void {
    this.epochValue++
    this.tracked?.forgetAll()
    this.lru = this.newLru()
  }

  /** Stops listening to the tracking (which stays open: it may be shared). */
  close(): void {
    this.tracked?.close()
  }
}
