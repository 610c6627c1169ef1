/** One read sent on the tracked connection; see {@link InFlightReads.begin}. */
export interface TrackedRead {
  /** The tracking generation the read was sent in. */
  readonly generation: number
  /**
   * True when the reply may be kept as tracked for `key`: tracking stayed established in the same
   * generation and no invalidation of `key` arrived since the read was sent. Call before {@link end}.
   */
  unchanged(key: string): boolean
  /** The read's reply was handled: stop watching its keys. Idempotent. */
  end(): void
}

interface Watch {
  keys: readonly string[]
  changed: Set<string>
  ended: boolean
}

/**
 * The keys of the reads in flight on the tracked connection. Invalidations travel on another
 * connection, so one can overtake the reply of a read it concerns (the read ran, the key changed,
 * the invalidation arrived, then the reply): the reply then holds a value already outdated, and
 * Redis will not say so again. Each invalidation is therefore noted against the reads in flight,
 * and their replies are not kept for those keys (Redis docs, "Client side caching", the race of
 * the two connections).
 */
export class InFlightReads {
  private readonly byKey = new Map<string, Set<Watch>>()

  /** Reads in flight now. */
  get size(): number {
    let n = 0
    for (const set of this.byKey.values()) n += set.size
    return n
  }

  begin(keys: readonly string[], generation: number, current: () => number): TrackedRead {
    const watch: Watch = { keys, changed: new Set(), ended: false }
    for (const key of keys) {
      let set = this.byKey.get(key)
      if (!set) {
        set = new Set()
        this.byKey.set(key, set)
      }
      set.add(watch)
    }
    return {
      generation,
      unchanged: (key) => !watch.ended && current() === generation && !watch.changed.has(key),
      end: () => this.end(watch),
    }
  }

  /** An invalidation of `key` arrived: every read in flight on it must not keep its reply. */
  invalidated(key: string): void {
    for (const watch of this.byKey.get(key) ?? []) watch.changed.add(key)
  }

  private end(watch: Watch): void {
    if (watch.ended) return
    watch.ended = true
    for (const key of watch.keys) {
      const set = this.byKey.get(key)
      set?.delete(watch)
      if (set?.size === 0) this.byKey.delete(key)
    }
  }
}
