import type { Cluster } from 'ioredis'
import { createRedisClient } from '../../src/redis/index.js'
import { TEST_REDIS_CLUSTER_NODES } from '../support/redis.js'
import { PrivateCluster } from '../support/redis_cluster.js'

/** A cluster to test on, and how to let go of it. */
export interface ClusterTarget {
  seeds: readonly string[]
  /** A client with the test options (roomy command timeout, offline queue on). */
  client(commandTimeoutMs?: number): Cluster
  /** Disconnects the clients made here; stops the cluster if this file started it. */
  close(): Promise<void>
}

/**
 * The CI cluster named by `FLOODGATE_TEST_REDIS_CLUSTER` when set; otherwise a
 * private 3-master cluster started for this file (so the cluster tests also
 * run in a plain `npm test`).
 */
export async function clusterTarget(): Promise<ClusterTarget> {
  const own = TEST_REDIS_CLUSTER_NODES === undefined ? await PrivateCluster.start({ masters: 3 }) : undefined
  const seeds = TEST_REDIS_CLUSTER_NODES ?? own?.seeds ?? []
  const clients: Cluster[] = []
  return {
    seeds,
    client(commandTimeoutMs = 2000) {
      const client = createRedisClient(seeds, {
        commandTimeoutMs,
        redis: { enableOfflineQueue: true },
        cluster: { enableOfflineQueue: true },
      }) as Cluster
      clients.push(client)
      return client
    },
    async close() {
      for (const c of clients) c.disconnect()
      await own?.destroy()
    },
  }
}
