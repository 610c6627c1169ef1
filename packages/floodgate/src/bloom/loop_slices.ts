import { setImmediate } from 'node:timers/promises'

/**
 * Cuts CPU-bound work into runs of about `sliceMs` (ms) with a turn of the event loop between
 * them (`setImmediate`: timers and I/O callbacks run first), so the requests of this process wait
 * behind one run, not the whole job.
 */
export class LoopSlices {
  private started = performance.now()

  constructor(private readonly sliceMs: number) {}

  /** Yields to the event loop when the current run has lasted `sliceMs` or more; else resolves at once. */
  async pause(): Promise<void> {
    if (performance.now() - this.started < this.sliceMs) return
    await setImmediate()
    this.started = performance.now()
  }

  /**
   * Calls `fn` on consecutive pieces of `items` (at most `step` items each), pausing (see
   * {@link pause}) after each piece; `fn`'s second argument is the piece's first index in `items`.
   */
  async forEachPiece<T>(
    items: readonly T[],
    step: number,
    fn: (piece: readonly T[], from: number) => void,
  ): Promise<void> {
    for (let from = 0; from < items.length; from += step) {
      fn(from === 0 && items.length <= step ? items : items.slice(from, from + step), from)
      await this.pause()
    }
  }
}
