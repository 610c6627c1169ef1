import { GuardAbortedError, OverloadedError, type ShedReason } from './errors.js'
import { GuardEventEmitter } from './events.js'
import { type GuardOptions, type ResolvedGuardOptions, resolveGuardOptions } from './options.js'

/** Options of one {@link ConcurrencyGuard.run} call. */
export interface RunOptions {
  /** Aborting it while the call waits in the queue leaves the queue and rejects with {@link GuardAbortedError}. */
  signal?: AbortSignal
}

interface Waiter {
  grant: () => void
  done: boolean
}

/**
 * A load-shedding bulkhead (Nygard, "Release It!", ch. 5 "Bulkheads" and
 * "Shed Load"): at most `maxConcurrent` calls run at once; the next ones wait
 * in a FIFO queue of at most `maxQueue` for at most `maxQueueWaitMs`; past
 * that a call is refused at once with {@link OverloadedError}, its function
 * never called. A slot freed by a finishing call (resolved or rejected) goes
 * straight to the oldest waiter. In-process: one guard bounds one process.
 */
export class ConcurrencyGuard {
  /** `admitted` and `shed` events (metrics: `bindGuardMetrics`). */
  readonly events = new GuardEventEmitter()
  readonly options: ResolvedGuardOptions
  private running = 0
  private waiting = 0
  // FIFO with a moving head; abandoned waiters stay in place marked `done` and are skipped.
  private queue: Waiter[] = []
  private head = 0

  /** @throws {InvalidArgumentError} on an option out of range (see {@link GuardOptions}). */
  constructor(options: GuardOptions) {
    this.options = resolveGuardOptions(options)
  }

  /** Calls running now (≤ `maxConcurrent`). */
  get inFlight(): number {
    return this.running
  }

  /** Calls waiting for a slot now (≤ `maxQueue`). */
  get queued(): number {
    return this.waiting
  }

  /**
   * Runs `fn` once a slot is free and returns what it returns (its rejection
   * too); the slot is freed when its promise settles.
   * @throws {OverloadedError} `queue_full` when every slot and queue place is
   *   taken, `queue_timeout` after `maxQueueWaitMs` in the queue; `fn` never ran.
   * @throws {GuardAbortedError} when `options.signal` aborted before `fn` started.
   */
  async run<T>(fn: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    const signal = options.signal
    if (signal?.aborted) throw new GuardAbortedError(this.options.name, signal.reason)
    let waitedMs = 0
    if (this.running < this.options.maxConcurrent) this.running++
    else waitedMs = await this.enqueue(signal)
    this.events.emit('admitted', { waitedMs })
    try {
      return await fn()
    } finally {
      this.release()
    }
  }

  /** Waits for a slot handed over by {@link release}; resolves with the time waited (ms). */
  private enqueue(signal: AbortSignal | undefined): Promise<number> {
    if (this.waiting >= this.options.maxQueue) throw this.shed('queue_full', 0)
    const started = performance.now()
    this.waiting++
    return new Promise<number>((resolve, reject) => {
      const leave = (error: Error) => {
        waiter.done = true
        this.waiting--
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        reject(error)
      }
      const onAbort = () => leave(new GuardAbortedError(this.options.name, signal?.reason))
      const timer = setTimeout(
        () => leave(this.shed('queue_timeout', performance.now() - started)),
        this.options.maxQueueWaitMs,
      )
      const waiter: Waiter = {
        done: false,
        grant: () => {
          waiter.done = true
          this.waiting--
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          resolve(performance.now() - started)
        },
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.queue.push(waiter)
    })
  }

  /** Hands the slot to the oldest live waiter, or frees it. */
  private release(): void {
    while (this.head < this.queue.length) {
      const waiter = this.queue[this.head++]!
      this.compact()
      if (!waiter.done) {
        waiter.grant()
        return
      }
    }
    this.running--
  }

  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue = []
      this.head = 0
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head)
      this.head = 0
    }
  }

  private shed(reason: ShedReason, waitedMs: number): OverloadedError {
    this.events.emit('shed', { reason, waitedMs })
    return new OverloadedError(this.options.name, reason, this.options.retryAfterMs)
  }
}
