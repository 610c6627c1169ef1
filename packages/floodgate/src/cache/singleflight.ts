/**
 * Singleflight (after Go's golang.org/x/sync/singleflight): concurrent calls
 * for one key in one process share a single execution of `fn` and its result.
 */
export class Singleflight<R> {
  private readonly inFlight = new Map<string, Promise<R>>()

  /** @param onJoin called for each call that joins one in flight (so joined callers can be counted). */
  constructor(private readonly onJoin?: (key: string) => void) {}

  /** Runs `fn` unless a call for `key` is in flight, in which case it joins that call. */
  run(key: string, fn: () => Promise<R>): Promise<R> {
    const existing = this.inFlight.get(key)
    if (existing !== undefined) {
      this.onJoin?.(key)
      return existing
    }
    const promise = fn().finally(() => this.inFlight.delete(key))
    this.inFlight.set(key, promise)
    return promise
  }

  /** True while a call for `key` runs. */
  has(key: string): boolean {
    return this.inFlight.has(key)
  }
}
