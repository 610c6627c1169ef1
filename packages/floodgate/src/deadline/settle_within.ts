/**
 * Settles like `promise`, or rejects with `onTimeout()` once `timeoutMs` (wall clock, ms) passes
 * first. For one-off waits such as start-up readiness; request-path Redis calls use
 * `withinDeadline`, which does not count time the process spent busy.
 */
export function settleWithin<T>(promise: Promise<T>, timeoutMs: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(onTimeout()), timeoutMs)
  })
  return Promise.race([promise, expired]).finally(() => clearTimeout(timer))
}
