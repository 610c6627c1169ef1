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
    const promise = fn().finally(() => {
      if (this.inFlight.get(key) === promise) this.inFlight.delete(key)
    })
    this.inFlight.set(key, promise)
    return promise
  }

  /** Joins the call in flight for `key` (counted as a join); undefined when there is none. */
  join(key: string): Promise<R> | undefined {
    const existing = this.inFlight.get(key)
    if (existing !== undefined) this.onJoin?.(key)
    return existing
  }

  /**
   * Lets no later call join the calls in flight for `keys` (all keys when undefined): they finish
   * for the callers they have; the next call for such a key runs `fn` anew.
   */
  forget(keys?: readonly string[]): void {
    if (keys === undefined) this.inFlight.clear()
    else for (const key of keys) this.inFlight.delete(key)
  }

  /** True while a call for `key` runs. */
  has(key: string): boolean {
    return this.inFlight.has(key)
  }
}
