import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis'
import { fullJitterDelayMs } from '../backoff/index.js'
import { DEADLINE_DEFAULTS } from '../deadline/defaults.js'
import type { RedisClient } from './types.js'

/** Options floodgate needs on any client it uses. */
export interface FloodgateClientOptions {
  /**
   * ioredis' per-command timeout (ms): the hard cap of any command's wall-clock wait. floodgate's
   * request-path calls have their own, shorter, loop-aware deadlines (`withinDeadline`: 50 ms of
   * idle event loop by default), which tell a dead Redis from a busy process; this cap only bounds
   * what nothing else bounds.
   * @default 2_000 (`DEADLINE_DEFAULTS.maxWaitMs`)
   */
  commandTimeoutMs?: number
  /**
   * Timeout (ms) for the TCP connect.
   * @default 1000
   */
  connectTimeoutMs?: number
}

const defaults = {
  commandTimeoutMs: DEADLINE_DEFAULTS.maxWaitMs,
  connectTimeoutMs: 1000,
} satisfies Required<FloodgateClientOptions>

/**
 * ioredis settings that make an outage fail fast instead of hanging:
 * no offline queue (a command sent while disconnected fails at once), no
 * per-request retries, a per-command timeout, and reconnection with capped
 * backoff (full jitter under a cap of 50 ms doubling to 2 s) in the background.
 */
export function floodgateRedisOptions(options: FloodgateClientOptions = {}): RedisOptions {
  const o = { ...defaults, ...options }
  return {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: o.commandTimeoutMs,
    connectTimeout: o.connectTimeoutMs,
    retryStrategy: (times) => fullJitterDelayMs(times, 50, 2000),
    lazyConnect: false,
  }
}

/** Options of {@link createRedisClient}. */
export interface CreateRedisClientOptions extends FloodgateClientOptions {
  /** Extra ioredis options, applied over {@link floodgateRedisOptions}. */
  redis?: RedisOptions
  /** Extra ioredis cluster options (cluster targets only). */
  cluster?: ClusterOptions
  /**
   * Receives the client's `error` events (refused connects, resets). A listener is always
   * attached, so Node never prints "Unhandled error event"; by default errors are dropped here
   * because each call that meets them already fails with `StoreUnavailableError` or falls back.
   * @default ignore
   */
  onError?: (error: Error) => void
}

/**
 * Creates a single-node client from a `redis://` URL, or a cluster client
 * from a list of `host:port` seeds, with {@link floodgateRedisOptions}, with an
 * `error` listener attached (see {@link CreateRedisClientOptions.onError}).
 */
export function createRedisClient(
  target: string | readonly string[],
  options: CreateRedisClientOptions = {},
): RedisClient {
  const client = newClient(target, options)
  client.on('error', options.onError ?? (() => {}))
  return client
}

function newClient(target: string | readonly string[], options: CreateRedisClientOptions): RedisClient {
  const base = floodgateRedisOptions(options)
  if (typeof target === 'string') return new Redis(target, { ...base, ...options.redis })
  const nodes = target.map((seed) => {
    const [host, port] = seed.split(':')
    return { host: host ?? '127.0.0.1', port: Number(port ?? 6379) }
  })
  return new Cluster(nodes, {
    enableOfflineQueue: false,
    redisOptions: { ...base, ...options.redis },
    clusterRetryStrategy: (times) => fullJitterDelayMs(times, 100, 2000),
    ...options.cluster,
  })
}
