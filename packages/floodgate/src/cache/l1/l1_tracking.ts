import type { Redis } from 'ioredis'
import type { ClientTracking } from '../../tracking/index.js'

/** An L2 read sent on the tracked connection: {@link L1Tracking.settle} it once its reply is in. */
export interface TrackedL2Read {
  readonly connection: Redis
  readonly valueKey: string
  unchanged(key: string): boolean
  end(): void
  readonly generation: number
}

/**
 * What a settled tracked read allows: `tracked` with the generation it was read in (keep it until
 * Redis invalidates it), or `skip` (an invalidation of its key overtook the reply: serve it, keep
 * nothing). A read not sent on the tracked connection has none: kept for the L1 TTL as before.
 */
export type L1Admission = { kind: 'tracked'; generation: number; valueKey: string } | { kind: 'skip' }

const SKIP: L1Admission = { kind: 'skip' }

/**
 * Server-assisted client-side caching for one cache's L1 (Redis `CLIENT TRACKING` through a
 * {@link ClientTracking}): an L2 read sent on the tracked connection lets its entry stay in L1
 * until Redis says its value key changed (a fill, an invalidation, an expiry or an eviction, by any
 * instance), bounded by `maxAgeMs`, instead of the L1 TTL. The rules are LiveCounts':
 *
 * - a tracked entry is served past the L1 TTL only while tracking is established in the
 *   generation it was read in; once tracking is lost, flushed or silent it is served as an
 *   untracked entry would be: within the L1 TTL of the last time it was proven fresh (its read,
 *   or the last pong or message of its generation: every invalidation sent before had arrived),
 *   so a Redis stall that also breaks tracking leaves L1 as it would be without tracking, not
 *   empty, and no staler than the L1 TTL allows;
 * - an invalidation that overtakes the reply of the read it concerns (in-flight race): the value
 *   is returned to the caller but not kept;
 * - not established (connecting, Redis Cluster, Redis without tracking): reads go on the caller's
 *   client and entries keep the L1 TTL, as without tracking.
 *
 * Keeps the value key of each tracked entry (bounded by the L1) to find the entry an invalidation
 * names; an invalidation calls `onInvalidated(ids)`.
 */
export class L1Tracking {
  /** Value key → L1 id of the entries kept as tracked. */
  private readonly idByKey = new Map<string, string>()
  private readonly stopListening: () => void
  /** The last generation that ended, with the last time (performance.now() ms) it was proven. */
  private ended = { generation: 0, heardAtMs: Number.NEGATIVE_INFINITY }

  constructor(
    readonly tracking: ClientTracking,
    readonly maxAgeMs: number,
    onInvalidated: (ids: readonly string[]) => void,
  ) {
    this.stopListening = tracking.onInvalidate((keys) => {
      if (keys === null) {
        // the generation moved on (flush() bumped it): no entry is tracked any more; the ended
        // one's last proof bounds how long its entries are still served, as untracked ones
        this.ended = { generation: tracking.generation - 1, heardAtMs: tracking.heardAtMs }
        this.idByKey.clear()
        return
      }
      const ids: string[] = []
      for (const key of keys) {
        const id = this.idByKey.get(key)
        if (id === undefined) continue
        this.idByKey.delete(key)
        ids.push(id)
      }
      if (ids.length > 0) onInvalidated(ids)
    })
  }

  /** Tracked ids now. */
  get size(): number {
    return this.idByKey.size
  }

  /** Starts an L2 read of `valueKey`: on the tracked connection while established, else `undefined`. */
  begin(valueKey: string): TrackedL2Read | undefined {
    const read = this.tracking.begin([valueKey])
    return read === undefined ? undefined : Object.assign(read, { valueKey })
  }

  /** The reply of `read` is in: what L1 may do with it. Ends the read. */
  settle(read: TrackedL2Read): L1Admission {
    const unchanged = read.unchanged(read.valueKey)
    read.end()
    return unchanged ? { kind: 'tracked', generation: read.generation, valueKey: read.valueKey } : SKIP
  }

  /** True while an entry read in `generation` may be served without a TTL. */
  valid(generation: number): boolean {
    return this.tracking.established && this.tracking.generation === generation
  }

  /**
   * For an entry read in `generation` that is not {@link valid}: ms since tracking last proved
   * it fresh (the last pong or message of that generation; +Infinity when unknown, an older one).
   */
  msSinceProven(generation: number): number {
    const heardAtMs =
      generation === this.tracking.generation
        ? this.tracking.heardAtMs // silent
        : generation === this.ended.generation
          ? this.ended.heardAtMs // lost or flushed
          : Number.NEGATIVE_INFINITY
    return performance.now() - heardAtMs
  }

  /** An entry read under `valueKey` was kept as `id`. */
  kept(valueKey: string, id: string): void {
    this.idByKey.set(valueKey, id)
  }

  /** The entry of `valueKey` left L1 (evicted, deleted, replaced). */
  forget(valueKey: string): void {
    this.idByKey.delete(valueKey)
  }

  /** Every tracked entry left L1 at once (a clear). */
  forgetAll(): void {
    this.idByKey.clear()
  }

  /** Stops listening to the tracking (it does not close it). */
  close(): void {
    this.stopListening()
    this.forgetAll()
  }
}
