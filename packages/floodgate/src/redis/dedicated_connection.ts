import type { ClusterOptions, Redis, RedisOptions } from 'ioredis'
import { isCluster, type RedisClient } from './types.js'

/** How a dedicated connection differs from the client it is opened from; unset fields are inherited. */
export interface DedicatedConnectionOptions {
  /** Per-command timeout (ms), or `null` for none (a subscriber, a blocking read). @default the client's */
  commandTimeoutMs?: number | null
  /** Queue commands sent while (re)connecting instead of failing them at once. @default the client's */
  offlineQueue?: boolean
  /** ioredis `maxRetriesPerRequest`. @default the client's */
  maxRetriesPerRequest?: number
  /**
   * Let ioredis re-send SUBSCRIBE after a reconnect. A subscriber turns it off and re-subscribes
   * itself: ioredis leaves that promise without a handler, so closing the connection while it is
   * in flight is an unhandled rejection ("Connection is closed."). Single node only (a Cluster's
   * subscriber re-subscribes on its own, and handles the failure). @default true
   */
  autoResubscribe?: boolean
}

/**
 * Opens a connection of its own next to `client` (same nodes, credentials, TLS and key prefix;
 * for a Cluster its `redisOptions` too), for work that must not share the client's: a pub/sub
 * subscriber, blocking reads, WAIT after writes, slow maintenance. It connects now. Its `error`
 * events are swallowed (on a Cluster too): each failed command rejects on its own, and an
 * unhandled `error` event would crash the process. The caller disconnects it when done.
 */
export function openDedicatedConnection(
  client: RedisClient,
  options: DedicatedConnectionOptions = {},
): RedisClient {
  const node: RedisOptions = { lazyConnect: false }
  if (options.commandTimeoutMs !== undefined) node.commandTimeout = options.commandTimeoutMs ?? undefined
  if (options.offlineQueue !== undefined) node.enableOfflineQueue = options.offlineQueue
  if (options.maxRetriesPerRequest !== undefined) node.maxRetriesPerRequest = options.maxRetriesPerRequest
  if (options.autoResubscribe !== undefined) node.autoResubscribe = options.autoResubscribe
  let connection: RedisClient
  if (isCluster(client)) {
    const { lazyConnect, enableOfflineQueue, autoResubscribe: _, ...perNode } = node
    const overrides: ClusterOptions = {
      lazyConnect,
      // duplicate() replaces redisOptions as a whole: keep the client's, then override
      redisOptions: { ...client.options.redisOptions, ...perNode },
    }
    if (enableOfflineQueue !== undefined) overrides.enableOfflineQueue = enableOfflineQueue
    connection = client.duplicate(undefined, overrides)
  } else {
    connection = (client as Redis).duplicate(node)
  }
  connection.on('error', () => {})
  return connection
}

/**
 * A pub/sub subscriber's {@link openDedicatedConnection}: an offline queue (its SUBSCRIBE may be
 * sent before it connects), no command timeout (a subscribed connection has no replies to time)
 * and no `autoResubscribe` (the caller re-subscribes after each reconnect, with a handler).
 */
export function openSubscriberConnection(client: RedisClient): RedisClient {
  return openDedicatedConnection(client, {
    offlineQueue: true,
    commandTimeoutMs: null,
    autoResubscribe: false,
  })
}
