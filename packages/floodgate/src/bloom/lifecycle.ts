import { setTimeout as sleep } from 'node:timers/promises'
import { equalJitterDelayMs } from '../backoff/index.js'
import { LockTimeoutError } from '../lock/errors.js'
import type { BloomFilter } from './bloom_filter.js'
import { BloomRebuiltElsewhereError } from './errors.js'
import type { RebuildResult } from './rebuild.js'

/** Whether the gate uses the filter's "definitely absent" answers. */
export type BloomTrust =
  /** Answers come from the filter (or its replica). */
  | 'trusted'
  /** An add failed: every id is "maybe" until a rebuild begun after the failure succeeds. */
  | 'bypassed'

/** What the background rebuild is doing. */
export type BloomRebuildState =
  /** Nothing runs. */
  | 'idle'
  /** A query found the filter not ready; reading whether it vanished from Redis. */
  | 'checking'
  /** The retry loop runs (one at a time) until a rebuild succeeds or the lifecycle closes. */
  | 'retrying'
  /** Closed: nothing starts again. */
  | 'closed'

/** What a rebuild reports: the {@link RebuildResult} and the filter's shape. */
export interface BloomRebuildReport extends RebuildResult {
  /** Filter size m (bits). */
  bits: number
  /** Hash functions k. */
  hashes: number
  /** Shard keys. */
  shards: number
}

/** Events of a {@link BloomLifecycle} (for logs and metrics). */
export type BloomLifecycleEvent =
  | { type: 'rebuilt'; report: BloomRebuildReport }
  /** A rebuild attempt of the retry loop failed; the next one runs in `retryInMs`. */
  | { type: 'rebuild-failed'; attempt: number; retryInMs: number; error: unknown }
  /** Another instance holds the rebuild lock (told once per loop); waiting `retryInMs`. */
  | { type: 'rebuild-elsewhere'; retryInMs: number }
  /** Another instance published `generation` while this one waited: the loop ends. */
  | { type: 'rebuilt-elsewhere'; generation: number }
  /** Adding `ids` failed: the gate is bypassed here until a rebuild. */
  | { type: 'add-failed'; ids: readonly string[]; error: unknown }
  /** The filter vanished from Redis after it was built (data lost): rebuilding it. */
  | { type: 'missing' }

export interface BloomLifecycleOptions {
  /** The request-path filter: the lifecycle adds through it and watches its `failOpen` events. */
  filter: BloomFilter
  /** The same filter on a maintenance connection (roomier timeout) for rebuilds and probes. @default filter */
  rebuilder?: BloomFilter
  /**
   * What the gate asks while trusted: a `BloomReplica` of `filter` (answers in process) or the
   * filter itself. @default filter
   */
  answers?: { mightContain(items: readonly string[]): Promise<boolean[]> }
  /** Every id the filter must hold, read afresh for each rebuild (e.g. from the database). */
  source: () => AsyncIterable<readonly string[]>
  /** Wait (ms) after the first failed attempt; doubles per failure up to `retryMaxMs`. @default 1_000 */
  retryBaseMs?: number
  /** Cap of the wait between attempts (ms). @default 60_000 */
  retryMaxMs?: number
  onEvent?: (event: BloomLifecycleEvent) => void
}

export const BLOOM_LIFECYCLE_DEFAULTS = { retryBaseMs: 1_000, retryMaxMs: 60_000 } as const

/**
 * Keeps a Bloom filter fit to gate reads: rebuilt from its source in the background (at
 * {@link start}, and again when a query finds it missing in Redis), retried with capped,
 * jittered backoff until a rebuild succeeds or {@link close}; never a false negative: when an
 * add fails, the {@link gate} answers "maybe" for every id ({@link trust} `bypassed`) until a
 * rebuild that began after the failure succeeds.
 */
export class BloomLifecycle {
  private trustState: BloomTrust = 'trusted'
  private rebuildState: BloomRebuildState = 'idle'
  private loop: Promise<void> | undefined
  // Adds failed so far: a rebuild restores trust only if none failed after it began (its source
  // holds every id committed before it is read, not ids committed later).
  private failedAdds = 0
  private readonly closing = new AbortController()
  private readonly rebuilder: BloomFilter
  private readonly retryBaseMs: number
  private readonly retryMaxMs: number
  private readonly onNotReady = ({ reason }: { reason: string }) => {
    if (reason === 'not-ready' && this.rebuildState === 'idle') void this.checkMissing()
  }

  /**
   * The gate for a cache's `bloom` option: the filter's answers while trusted, all "maybe"
   * while bypassed. `inProcess` when `answers` is given (a replica).
   */
  readonly gate: { mightContain(items: readonly string[]): Promise<boolean[]>; readonly inProcess: boolean }

  constructor(private readonly options: BloomLifecycleOptions) {
    this.rebuilder = options.rebuilder ?? options.filter
    this.retryBaseMs = options.retryBaseMs ?? BLOOM_LIFECYCLE_DEFAULTS.retryBaseMs
    this.retryMaxMs = options.retryMaxMs ?? BLOOM_LIFECYCLE_DEFAULTS.retryMaxMs
    const answers = options.answers ?? options.filter
    this.gate = {
      inProcess: options.answers !== undefined,
      mightContain: (items) =>
        this.trustState === 'trusted' ? answers.mightContain(items) : Promise.resolve(items.map(() => true)),
    }
  }

  /** `trusted` or `bypassed` (see {@link BloomTrust}). */
  get trust(): BloomTrust {
    return this.trustState
  }

  /** `idle`, `checking`, `retrying` or `closed` (see {@link BloomRebuildState}). */
  get rebuilding(): BloomRebuildState {
    return this.rebuildState
  }

  /**
   * Starts the background rebuild (a generation another instance publishes meanwhile also ends
   * it) and the watch for a filter that vanished from Redis.
   * @returns settles when a rebuild succeeded (here or elsewhere) or the lifecycle closed; never rejects.
   */
  start(): Promise<void> {
    this.options.filter.on('failOpen', this.onNotReady)
    return this.rebuildUntilDone(true)
  }

  /**
   * Adds ids to the filter (announced to replicas). Never throws: a failure bypasses the gate
   * and starts the retry loop (its rebuild reads the ids from the source).
   */
  async add(ids: readonly string[]): Promise<void> {
    try {
      await this.options.filter.add(ids)
    } catch (error) {
      this.trustState = 'bypassed'
      this.failedAdds++
      this.options.onEvent?.({ type: 'add-failed', ids, error })
      void this.rebuildUntilDone(false)
    }
  }

  /**
   * Rebuilds the filter from the source now, once (no retry, no waiting for the lock).
   * @throws {LockTimeoutError} when a rebuild runs already (this or another instance).
   * @throws whatever the source throws, or a Redis / interruption error; the served generation is unchanged.
   */
  rebuild(): Promise<BloomRebuildReport> {
    return this.rebuildOnce(undefined)
  }

  /** {@link rebuild}; with `ifReadyIs`, none if another generation was published since (`RebuildOptions.ifReadyIs`). */
  private async rebuildOnce(ifReadyIs: number | null | undefined): Promise<BloomRebuildReport> {
    const failedBefore = this.failedAdds
    const result = await this.rebuilder.rebuild(this.options.source(), {
      lockWaitMs: 0,
      signal: this.closing.signal,
      ifReadyIs,
    })
    if (this.failedAdds === failedBefore) this.trustState = 'trusted'
    const { bits, hashes, shards } = this.options.filter
    const report = { ...result, bits, hashes, shards }
    this.options.onEvent?.({ type: 'rebuilt', report })
    return report
  }

  /** Stops the loop and the watch (an attempt in flight is aborted); nothing starts again. */
  close(): void {
    this.rebuildState = 'closed'
    this.closing.abort()
    this.options.filter.off('failOpen', this.onNotReady)
  }

  /** One retry loop at a time: a later failed add is covered by its next attempt. */
  private rebuildUntilDone(acceptElsewhere: boolean): Promise<void> {
    if (this.closing.signal.aborted) return Promise.resolve()
    this.rebuildState = 'retrying'
    this.loop ??= this.retry(acceptElsewhere).finally(() => {
      this.loop = undefined
      if (this.rebuildState === 'retrying') this.rebuildState = 'idle'
    })
    return this.loop
  }

  private async retry(acceptElsewhere: boolean): Promise<void> {
    let toldElsewhere = false
    const signal = this.closing.signal
    for (let attempt = 1; !signal.aborted; attempt++) {
      // read before the attempt: a generation the lock holder publishes after our lock attempt
      // but before a later read would look like the one we had seen, and we would rebuild again
      const before = acceptElsewhere ? await this.readyGeneration() : undefined
      let seen: number | null | undefined
      try {
        // trusted: a generation published since `before` holds what we would build
        await this.rebuildOnce(this.trustState === 'trusted' ? before : undefined)
        if (this.trustState === 'trusted') return
      } catch (error) {
        if (signal.aborted) return
        if (error instanceof BloomRebuiltElsewhereError) {
          this.options.onEvent?.({ type: 'rebuilt-elsewhere', generation: error.generation })
          return
        }
        const retryInMs = Math.round(equalJitterDelayMs(attempt - 1, this.retryBaseMs, this.retryMaxMs))
        if (error instanceof LockTimeoutError) {
          seen = before
          if (!toldElsewhere) this.options.onEvent?.({ type: 'rebuild-elsewhere', retryInMs })
          toldElsewhere = true
        } else {
          this.options.onEvent?.({ type: 'rebuild-failed', attempt, retryInMs, error })
        }
        await sleep(retryInMs, undefined, { signal, ref: false }).catch(() => undefined)
        // bypassed: an add failed here, so only our own rebuild is known to hold that id
        if (acceptElsewhere && this.trustState === 'trusted' && seen !== undefined && !signal.aborted) {
          const now = await this.readyGeneration()
          if (now !== undefined && now !== null && now !== seen) {
            this.options.onEvent?.({ type: 'rebuilt-elsewhere', generation: now })
            return
          }
        }
      }
    }
  }

  /** A not-ready answer: rebuild if `ready` is gone from Redis (read afresh: a racing publish starts nothing). */
  private async checkMissing(): Promise<void> {
    this.rebuildState = 'checking'
    const ready = await this.readyGeneration()
    if (this.rebuildState !== 'checking') return
    this.rebuildState = 'idle'
    if (ready !== null) return
    this.options.onEvent?.({ type: 'missing' })
    void this.rebuildUntilDone(true)
  }

  /** The generation `ready` points at; `undefined` when Redis did not answer. */
  private async readyGeneration(): Promise<number | null | undefined> {
    return this.rebuilder.readyGeneration().catch(() => undefined)
  }
}
