import { TEST_REDIS_CLUSTER_NODES, TEST_REDIS_URL } from '@floodgate/test-support'
import { Cluster, Redis } from 'ioredis'
import { createRedisClient, floodgateRedisOptions, type RedisClient } from '../../src/redis/index.js'

export {
  deleteByPrefix,
  TEST_REDIS_CLUSTER_NODES,
  TEST_REDIS_URL,
  uniquePrefix,
} from '@floodgate/test-support'

/**
 * What tests pass to `createRedisClient`: the cluster seeds when
 * `FLOODGATE_TEST_REDIS_CLUSTER` is set, otherwise {@link TEST_REDIS_URL}.
 */
export const TEST_REDIS_TARGET: string | readonly string[] = TEST_REDIS_CLUSTER_NODES ?? TEST_REDIS_URL

/**
 * A client with floodgate's production options, except a roomier command timeout (the test
 * machine is shared and at times slow) and an offline queue, so the first commands wait for the
 * connection.
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
