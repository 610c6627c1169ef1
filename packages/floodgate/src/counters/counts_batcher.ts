import type { Redis } from 'ioredis'
import type { TrackedRead } from '../tracking/index.js'
import type { CountsBatchRead, CountsReader, FlagQuery } from './read_counts.js'
import { flagKey } from './read_counts.js'

/** One Redis read the batcher sent: what it asked and when (ms, the caller's clock). */
export interface SentBatch {
  ids: ReadonlySet<string>
  flags: readonly FlagQuery[]
  sentAtMs: number
  /** Set when the read went on a tracked connection: which of its keys may be kept as tracked. */
  tracked?: TrackedRead
}

/** Starts a read on a tracked connection, or `undefined` to read on the reader's client. */
export type TrackRead = (
  ids: ReadonlySet<string>,
  flags: readonly FlagQuery[],
) => (TrackedRead & { connection: Redis }) | undefined

interface Pending {
  ids: Set<string>
  flags: Map<string, FlagQuery>
  done: Promise<CountsBatchRead>
  resolve: (read: CountsBatchRead) => void
}

/**
 * Puts the counts reads of concurrent callers into ONE pipelined Redis read
 * (DataLoader's batching, with one read in flight at a time): ids asked in
 * the same tick, or while a read is in flight, go in the next read; an
 * anonymous caller asking for an id the in-flight read already covers joins
 * it. A caller with a viewer always waits for a read sent after it asked, so
 * it sees its own writes whichever process made them.
 */
export class CountsBatcher {
  private pending: Pending | undefined
  private inFlight: { ids: ReadonlySet<string>; done: Promise<CountsBatchRead> } | undefined
  private scheduled = false

  /**
   * @param apply called once per read, before its callers resume (stores the answer).
   * @param track where each read goes (a tracked connection or the reader's client).
   */
  constructor(
    private readonly reader: CountsReader,
    private readonly now: () => number,
    private readonly apply: (batch: SentBatch, read: CountsBatchRead) => void,
    private readonly track: TrackRead = () => undefined,
  ) {}

  /** True while a sent read covers `id`. */
  isInFlight(id: string): boolean {
    return this.inFlight?.ids.has(id) === true
  }

  /** The reads that answer `ids` (canonical) and, with a viewer, its flags on them: one or two. */
  request(ids: readonly string[], viewer: string | undefined): Promise<CountsBatchRead>[] {
    const reads = new Set<Promise<CountsBatchRead>>()
    let pending: Pending | undefined
    for (const id of ids) {
      if (viewer === undefined && this.inFlight?.ids.has(id)) {
        reads.add(this.inFlight.done)
        continue
      }
      pending ??= this.pendingBatch()
      pending.ids.add(id)
      if (viewer !== undefined) pending.flags.set(flagKey(id, viewer), { itemId: id, userId: viewer })
    }
    if (pending) reads.add(pending.done)
    return [...reads]
  }

  private pendingBatch(): Pending {
    if (this.pending) return this.pending
    let resolve!: (read: CountsBatchRead) => void
    const done = new Promise<CountsBatchRead>((r) => {
      resolve = r
    })
    this.pending = { ids: new Set(), flags: new Map(), done, resolve }
    if (!this.inFlight && !this.scheduled) {
      // setImmediate, not a microtask: requests parsed in the same poll phase join this read
      this.scheduled = true
      setImmediate(() => {
        this.scheduled = false
        this.send()
      })
    }
    return this.pending
  }

  private send(): void {
    const batch = this.pending
    if (!batch || this.inFlight) return
    this.pending = undefined
    const flags = [...batch.flags.values()]
    const tracked = this.track(batch.ids, flags)
    const sent: SentBatch = { ids: batch.ids, flags, sentAtMs: this.now(), tracked }
    const done = this.reader
      .readBatch([...sent.ids], sent.flags, tracked?.connection)
      .catch((error: unknown) => ({ ok: false as const, reason: 'redis-error' as const, error }))
      .then((read) => {
        try {
          this.apply(sent, read)
        } finally {
          tracked?.end()
        }
        return read
      })
    this.inFlight = { ids: batch.ids, done }
    void done.then((read) => {
      this.inFlight = undefined
      batch.resolve(read)
      this.send()
    })
  }
}
