import { createRedisClient, type RedisClient } from 'floodgate'
import { type LocalRedis, portAnswers, startLocalRedis } from './local_server.js'

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

export interface RedisHandle {
  client: RedisClient
  /** The local redis-server this process started, if it started one. */
  local: LocalRedis | undefined
  /** Disconnects, then stops the local server if there is one. */
  close(): Promise<void>
}

/**
 * Connects with floodgate's fail-fast client options. `redisUrl` unset: use
 * 127.0.0.1:6379 if it answers, else start a local `redis-server` in `<dataDir>/redis`.
 */
export async function connectRedis(config: {
  redisUrl: string | undefined
  dataDir: string
  redisCommandTimeoutMs: number
}): Promise<RedisHandle> {
  let url = config.redisUrl ?? DEFAULT_REDIS_URL
  let local: LocalRedis | undefined
  if (config.redisUrl === undefined && !(await portAnswers('127.0.0.1', 6379))) {
    local = await startLocalRedis(config.dataDir)
    url = local.url
  }
  const client = createRedisClient(url, { commandTimeoutMs: config.redisCommandTimeoutMs })
  // Errors surface on the commands (and /readyz); the client reconnects in the background.
  client.on('error', () => {})
  return {
    client,
    local,
    async close() {
      client.disconnect()
      await local?.stop()
    },
  }
}
