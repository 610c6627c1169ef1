import type { RedisClient } from 'floodgate'
import { Cluster, type Redis } from 'ioredis'

/**
 * A second connection for background maintenance (rebuilds), with a roomier per-command
 * timeout (ms) than the request path's (50 ms by default): one slow reply from a loaded Redis
 * should not abort a rebuild of many steps. Its offline queue is on, so commands sent while it
 * is still connecting (right after start) wait for it, bounded by the timeout, instead of failing
 * at once. Connection errors surface as failed commands. Disconnect it on close.
 */
export function maintenanceClient(redis: RedisClient, commandTimeoutMs: number): RedisClient {
  if (redis instanceof Cluster) {
    const cluster = redis.duplicate(undefined, {
      enableOfflineQueue: true,
      redisOptions: { ...redis.options.redisOptions, commandTimeout: commandTimeoutMs },
    })
    cluster.on('error', () => {})
    return cluster
  }
  const client = (redis as Redis).duplicate({ commandTimeout: commandTimeoutMs, enableOfflineQueue: true })
  client.on('error', () => {})
  return client
}
