import { Cluster } from 'ioredis'
import { StoreUnavailableError } from '../errors/index.js'
import type { RedisClient } from '../redis/types.js'

/**
 * Settles like `promise`, or rejects with StoreUnavailableError after `timeoutMs` ms,
 * whichever comes first. The late outcome of `promise` is observed (no unhandled rejection).
 */
export function withDeadline<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new StoreUnavailableError(`${what} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    )
    promise.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/**
 * Whether the client's own per-command timeout (ioredis `commandTimeout`) already bounds each
 * call within `timeoutMs`, so no timer per call is needed. (A script-cache reload after NOSCRIPT
 * is a second command: up to twice the client timeout, once per Redis restart.)
 */
export function clientTimeoutWithin(client: RedisClient, timeoutMs: number): boolean {
  const clientMs =
    client instanceof Cluster ? client.options.redisOptions?.commandTimeout : client.options.commandTimeout
  return clientMs !== undefined && clientMs <= timeoutMs
}
