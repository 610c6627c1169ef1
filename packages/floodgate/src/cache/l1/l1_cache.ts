import { LRUCache } from 'lru-cache'
import type { NotFound } from '../not_found.js'

/** One L1 entry: the decoded value (or the not-found marker) and its logical expiry (ms epoch). */
export interface L1Entry<T> {
  value: T | NotFound
  /** Logical expiry (ms epoch) copied from the L2 envelope; past it the entry is not served from L1. */
  expiresAtMs: number
}

/**
 * The in-process tier: an LRU (`lru-cache`) bounded by entry count and by
 * bytes (each entry weighs its encoded envelope length), with a short TTL.
 *
 * `epoch` increases on every invalidation this process learns about (its own
 * `invalidate()` or a bus message) and on `clear()`. A load records the epoch
 * before it starts and puts its result in L1 only if the epoch did not move,
 * so a load that raced an invalidation cannot re-insert the old value here.
 */
export class L1Cache<T> {
  private readonly lru: LRUCache<string, L1Entry<T>>
  private epochValue = 0

  constructor(options: { maxEntries: number; maxBytes: number }) {
    this.lru = new LRUCache<string, L1Entry<T>>({
      max: options.maxEntries,
      maxSize: options.maxBytes,
      ttlAutopurge: false,
    })
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

  /** The entry, or undefined when absent, past its L1 TTL, or past its logical expiry. */
  get(key: string, nowMs: number): L1Entry<T> | undefined {
    const entry = this.lru.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAtMs <= nowMs) {
      this.lru.delete(key)
      return undefined
    }
    return entry
  }

  /** Stores an entry weighing `bytes`, for `ttlMs` (ms) capped by its logical expiry. */
  set(key: string, entry: L1Entry<T>, bytes: number, ttlMs: number, nowMs: number): void {
    const ttl = Math.min(ttlMs, entry.expiresAtMs - nowMs)
    if (ttl <= 0) return
    this.lru.set(key, entry, { ttl, size: Math.max(1, bytes) })
  }

  /** Removes keys and moves the epoch. */
  delete(keys: readonly string[]): void {
    this.epochValue++
    for (const key of keys) this.lru.delete(key)
  }

  /** Removes everything and moves the epoch. */
  clear(): void {
    this.epochValue++
    this.lru.clear()
  }
}
