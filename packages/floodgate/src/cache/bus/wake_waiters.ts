/** One registered wait for a key's wake-up (see {@link WakeWaiters.register}). */
export interface Waiter {
  /** Resolves `true` when the key is woken, `false` after `timeoutMs` (ms) or a cancel. */
  woken(timeoutMs: number): Promise<boolean>
  cancel(): void
}

/**
 * In-process registry of callers waiting for a cache key to be filled by
 * another process. One pub/sub subscription per cache feeds {@link wake};
 * this demultiplexes by key, so no waiter ever opens its own subscription.
 */
export class WakeWaiters {
  private readonly waiting = new Map<string, Set<() => void>>()

  /**
   * Returns a promise that resolves `true` when `key` is woken, or `false`
   * after `timeoutMs` (ms), plus a `cancel` that resolves it `false` at once.
   * Register before asking Redis, so a wake-up racing the reply is not lost.
   */
  register(key: string): Waiter {
    let set = this.waiting.get(key)
    if (set === undefined) {
      set = new Set()
      this.waiting.set(key, set)
    }
    const waiters = set
    let fired = false
    let resolveWait: ((woken: boolean) => void) | undefined
    const listener = () => {
      fired = true
      resolveWait?.(true)
    }
    waiters.add(listener)
    const cleanup = () => {
      waiters.delete(listener)
      if (waiters.size === 0 && this.waiting.get(key) === waiters) this.waiting.delete(key)
    }
    return {
      woken: (timeoutMs) =>
        new Promise<boolean>((resolve) => {
          if (fired) {
            cleanup()
            resolve(true)
            return
          }
          const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs))
          const finish = (woken: boolean) => {
            clearTimeout(timer)
            cleanup()
            resolve(woken)
          }
          resolveWait = finish
        }),
      cancel: () => {
        resolveWait?.(false)
        cleanup()
      },
    }
  }

  /** Wakes every waiter of `key`. */
  wake(key: string): void {
    const set = this.waiting.get(key)
    if (set === undefined) return
    for (const listener of [...set]) listener()
  }

  /** Wakes every waiter (after a bus reconnect: wake-ups may have been missed). */
  wakeAll(): void {
    for (const key of [...this.waiting.keys()]) this.wake(key)
  }
}
