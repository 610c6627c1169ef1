import { createRedisClient, type RedisClient } from 'floodgate'
import { redisClusterSeeds } from '../config/load.js'
import { type LocalRedis, portAnswers, startLocalRedis } from './local_server.js'

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379'

export interface RedisHandle {
  client: RedisClient
  /** The local redis-server this process started, if it started one. */
  local: LocalRedis | undefined
  /** Disconnects, then stops the local server if there is one. */
  close(): Promise<void>
}

/** Resolves on the client's first `ready`; rejects after `timeoutMs` with the last connection error, or on a refused setup command. */
function whenReady(client: RedisClient, timeoutMs: number): Promise<void> {
  if (client.status === 'ready') return Promise.resolve()
  return new Promise((resolve, reject) => {
    let last: Error | undefined
    const onError = (error: Error) => {
      last = error
    }
    const timer = setTimeout(() => {
      client.off('ready', onReady)
      client.off('error', onError)
      reject(last ?? new Error('no answer'))
    }, timeoutMs)
    const onReady = () => {
      clearTimeout(timer)
      client.off('error', onError)
      // ioredis reports `ready` even when its SELECT was refused (e.g. a db index out of range).
      if (last?.name === 'ReplyError') reject(last)
      else resolve()
    }
    client.once('ready', onReady)
    client.on('error', onError)
  })
}

/** The URL without its password, for messages. */
function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return 'REDIS_URL'
  }
}

/**
 * Connects with floodgate's fail-fast client options and waits for the first
 * connection (a dead or wrong REDIS_URL stops the start instead of running degraded). `redisUrl` unset: use
 * 127.0.0.1:6379 if it answers, else start a local `redis-server` in `<dataDir>/redis`.
 * `redisClusterNodes` set (comma-separated `host:port` seeds, REDIS_CLUSTER_NODES): an ioredis `Cluster`
 * instead (no local server), ready once it has the slot map.
 * @throws {Error} when Redis is not ready within `redisStartupTimeoutMs` (the message names the URL or seeds and the last error).
 */
export async function connectRedis(config: {
  redisUrl: string | undefined
  /** Redis Cluster seeds, comma-separated `host:port`; excludes `redisUrl`. @default undefined (single node) */
  redisClusterNodes?: string | undefined
  dataDir: string
  /** The client's command timeout (ms): the hard cap of every command's wait (REDIS_MAX_WAIT_MS). */
  redisMaxWaitMs: number
  /** Longest wait for the first connection at start (ms). @default 5000 */
  redisStartupTimeoutMs?: number
}): Promise<RedisHandle> {
  const listed = redisClusterSeeds(config)
  const seeds = listed !== undefined && listed.length > 0 ? listed : undefined
  let url = config.redisUrl ?? DEFAULT_REDIS_URL
  let local: LocalRedis | undefined
  if (seeds === undefined && config.redisUrl === undefined && !(await portAnswers('127.0.0.1', 6379))) {
    local = await startLocalRedis(config.dataDir)
    url = local.url
  }
  // Auto-pipelining: commands issued in one event-loop tick (many concurrent requests' cache reads,
  // counts, rate-limit scripts) leave in one write, instead of one socket write each (on a cluster:
  // one write per node).
  const client =
    seeds === undefined
      ? createRedisClient(url, {
          commandTimeoutMs: config.redisMaxWaitMs,
          redis: { enableAutoPipelining: true },
        })
      : createRedisClient(seeds, {
          commandTimeoutMs: config.redisMaxWaitMs,
          // CLUSTERDOWN and a closed node connection fail at once instead of ioredis' resend every
          // 100 ms (up to 16 times): each request-path caller falls back (reads to PostgreSQL) or
          // retries on its own terms. Until the cluster flags a killed master, its slots' commands
          // went MOVED → refused → resent, holding a write's cache read 1.3–2 s (issue 29)
          cluster: { enableAutoPipelining: true, retryDelayOnClusterDown: 0, retryDelayOnFailover: 0 },
        })
  // Errors surface on the commands (and /readyz); the client reconnects in the background.
  client.on('error', () => {})
  const startupTimeoutMs = config.redisStartupTimeoutMs ?? 5000
  try {
    await whenReady(client, startupTimeoutMs)
  } catch (error) {
    client.disconnect()
    await local?.stop()
    const message = (error as Error).message
    throw new Error(
      seeds === undefined
        ? `Redis at ${redactUrl(url)} is not usable: ${message} (waited up to ${startupTimeoutMs} ms); start it, or point REDIS_URL at a running one (unset REDIS_URL to use 127.0.0.1:6379 or a local redis-server)`
        : `Redis Cluster at ${seeds.join(',')} is not usable: ${message} (waited up to ${startupTimeoutMs} ms); start it, or point REDIS_CLUSTER_NODES at running cluster nodes`,
      { cause: error },
    )
  }
  return {
    client,
    local,
    async close() {
      client.disconnect()
      await local?.stop()
    },
  }
}
