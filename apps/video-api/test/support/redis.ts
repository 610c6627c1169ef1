import { TEST_REDIS_CLUSTER_NODES, TEST_REDIS_URL } from '@floodgate/test-support'
import { Cluster, Redis } from 'ioredis'

export {
  deleteByPrefix,
  forEachKeyPage,
  TEST_REDIS_CLUSTER_NODES,
  TEST_REDIS_URL,
} from '@floodgate/test-support'

/**
 * The environment a spawned service process needs to reach the test Redis:
 * `REDIS_CLUSTER_NODES` on a cluster (and no `REDIS_URL`), otherwise `REDIS_URL`.
 */
export function testRedisEnv(): { REDIS_URL?: string; REDIS_CLUSTER_NODES?: string } {
  return TEST_REDIS_CLUSTER_NODES === undefined
    ? { REDIS_URL: TEST_REDIS_URL }
    : { REDIS_CLUSTER_NODES: TEST_REDIS_CLUSTER_NODES.join(',') }
}

/**
 * A client for the app under test and for the tests' own checks, with ioredis' options (the
 * library tests' `testRedisClient` has floodgate's): an ioredis `Cluster` on the seeds of
 * `FLOODGATE_TEST_REDIS_CLUSTER` when that is set, otherwise a `Redis` on {@link TEST_REDIS_URL}.
 * Offline queue on (commands sent while connecting wait), one retry.
 */
export function plainTestRedisClient(): Redis | Cluster {
  if (TEST_REDIS_CLUSTER_NODES === undefined) return new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 })
  const nodes = TEST_REDIS_CLUSTER_NODES.map((seed) => {
    const [host, port] = seed.split(':')
    return { host: host ?? '127.0.0.1', port: Number(port ?? 6379) }
  })
  return new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } })
}
