import { randomBytes } from 'node:crypto'
import { Cluster, Redis } from 'ioredis'
import { createRedisClient, floodgateRedisOptions, type RedisClient } from '../../src/redis/index.js'

/** URL of the shared Redis the integration tests use. */
export const TEST_REDIS_URL = process.env.FLOODGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * Seeds (`host:port`) of a Redis Cluster to run the integration tests on, from
 * `FLOODGATE_TEST_REDIS_CLUSTER` (comma-separated, e.g. the output of
 * `scripts/redis-cluster/start.sh`); `undefined` when unset (single node).
 */
export const TEST_REDIS_CLUSTER_NODES: readonly string[] | undefined = parseSeeds(
  process.env.FLOODGATE_TEST_REDIS_CLUSTER,
)

/**
 * What tests pass to `createRedisClient`: the cluster seeds when
 * `FLOODGATE_TEST_REDIS_CLUSTER` is set, otherwise {@link TEST_REDIS_URL}.
 */
export const TEST_REDIS_TARGET: string | readonly string[] = TEST_REDIS_CLUSTER_NODES ?? TEST_REDIS_URL

function parseSeeds(value: string | undefined): readonly string[] | undefined {
  const seeds = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
  return seeds.length > 0 ? seeds : undefined
}

/** A fresh key prefix per test file, so runs never see each other's keys. */
export function uniquePrefix(label: string): string {
  return `fgtest:${label}:${process.pid}:${randomBytes(4).toString('hex')}`
}

/**
 * A client with floodgate's production options (offline queue off), except a
 * roomier command timeout so a loaded CI machine does not make tests flaky.
 */
export function testRedis(commandTimeoutMs = 2000): Redis {
  return new Redis(TEST_REDIS_URL, {
    ...floodgateRedisOptions({ commandTimeoutMs }),
    enableOfflineQueue: true,
  })
}

/**
 * Like {@link testRedis}, but on the Redis Cluster named by
 * `FLOODGATE_TEST_REDIS_CLUSTER` when that is set (an ioredis `Cluster`),
 * otherwise on the single node at {@link TEST_REDIS_URL}. Same options:
 * floodgate's production ones, a roomier command timeout, an offline queue so
 * the first commands wait for the connection (on a cluster: for the slot map).
 */
export function testRedisClient(commandTimeoutMs = 2000): RedisClient {
  if (TEST_REDIS_CLUSTER_NODES === undefined) return testRedis(commandTimeoutMs)
  return createRedisClient(TEST_REDIS_CLUSTER_NODES, {
    commandTimeoutMs,
    redis: { enableOfflineQueue: true },
    cluster: { enableOfflineQueue: true },
  })
}

/**
 * Deletes every key under `prefix` (SCAN, never KEYS). On a cluster client it
 * scans every master and deletes key by key (keys may live in any slot).
 */
export async function deleteByPrefix(client: RedisClient, prefix: string): Promise<number> {
  if (client instanceof Cluster) {
    let deleted = 0
    for (const node of client.nodes('master')) deleted += await deleteByPrefixOnNode(node, prefix, true)
    return deleted
  }
  return deleteByPrefixOnNode(client, prefix, false)
}

/** `perKey`: one UNLINK per key (a cluster node refuses multi-key UNLINK across slots). */
async function deleteByPrefixOnNode(client: Redis, prefix: string, perKey: boolean): Promise<number> {
  let deleted = 0
  // keys under the prefix, and keys whose hash tag opens with it (`{prefix…}…`, e.g. a fencing counter)
  for (const pattern of [`${prefix}*`, `{${prefix}*`]) {
    let cursor = '0'
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0 && !perKey) deleted += await client.unlink(...keys)
      if (keys.length > 0 && perKey) {
        const pipeline = client.pipeline()
        for (const key of keys) pipeline.unlink(key)
        for (const [error, count] of (await pipeline.exec()) ?? []) {
          if (error) throw error
          deleted += Number(count)
        }
      }
    } while (cursor !== '0')
  }
  return deleted
}

/** The nodes that hold data: every master of a cluster client, or the single node itself. */
export function masterNodes(client: RedisClient): Redis[] {
  return client instanceof Cluster ? client.nodes('master') : [client]
}

/**
 * A client on the test target (single node or cluster) with floodgate's production options, so
 * truly without an offline queue, already disconnected: every command fails at once, as against
 * an unreachable Redis (a client with an offline queue would hold a cluster command instead).
 */
export function deadRedisClient(): RedisClient {
  const client = createRedisClient(TEST_REDIS_TARGET)
  client.on('error', () => {})
  client.disconnect()
  return client
}

/**
 * A client on the test target with floodgate's production options (no offline queue), resolved
 * once connected (on a cluster: once it has the slot map). For tests that disconnect it mid-run:
 * afterwards every command fails at once instead of waiting in an offline queue.
 */
export async function readyProductionClient(commandTimeoutMs = 2000): Promise<RedisClient> {
  const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs })
  client.on('error', () => {})
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  return client
}
