import { StoreUnavailableError } from '../errors/index.js'

/**
 * Settles like `promise`, or rejects with StoreUnavailableError after `timeoutMs` ms,
 * whichever comes first. The late outcome of `promise` is observed (no unhandled rejection).
 */
export function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new StoreUnavailableError(`${what} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    )
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
