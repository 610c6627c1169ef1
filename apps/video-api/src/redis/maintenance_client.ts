import { openDedicatedConnection, type RedisClient } from 'floodgate'

/**
 * A second connection for background maintenance (rebuilds), with a roomier per-command
 * timeout (ms) than the request path's (`REDIS_COMMAND_TIMEOUT_MS`): one slow reply from a loaded Redis
 * should not abort a rebuild of many steps. Its offline queue is on, so commands sent while it
 * is still connecting (right after start) wait for it, bounded by the timeout, instead of failing
 * at once. Connection errors surface as failed commands. Disconnect it on close.
 */
export function maintenanceClient(redis: RedisClient, commandTimeoutMs: number): RedisClient {
  return openDedicatedConnection(redis, { commandTimeoutMs, offlineQueue: true })
}
