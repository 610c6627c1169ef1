import { Cluster, Redis } from 'ioredis'

/** URL of the shared single-node Redis the service tests use. */
export const TEST_REDIS_URL = process.env.FLOODGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * Seeds (`host:port`) of a Redis Cluster to run the service tests on, from
 * `FLOODGATE_TEST_REDIS_CLUSTER` (comma-separated, e.g. the output of
 * `scripts/redis-cluster/start.sh`); `undefined` when unset (single node).
 */
export const TEST_REDIS_CLUSTER_NODES: readonly string[] | undefined = (() => {
  const seeds = (process.env.FLOODGATE_TEST_REDIS_CLUSTER ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
  return seeds.length > 0 ? seeds : undefined
})()

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
 * A client for the app under test and for the tests' own checks: an ioredis `Cluster` on the
 * seeds of `FLOODGATE_TEST_REDIS_CLUSTER` when that is set, otherwise a `Redis` on
 * {@link TEST_REDIS_URL}. Offline queue on (commands sent while connecting wait), one retry.
 */
export function testRedisClient(): Redis | Cluster {
  if (TEST_REDIS_CLUSTER_NODES === undefined) return new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: 1 })
  const nodes = TEST_REDIS_CLUSTER_NODES.map((seed) => {
    const [host, port] = seed.split(':')
    return { host: host ?? '127.0.0.1', port: Number(port ?? 6379) }
  })
  return new Cluster(nodes, { redisOptions: { maxRetriesPerRequest: 1 } })
}

/**
 * Deletes every key under `prefix` (SCAN, never KEYS) and returns how many. On a cluster it scans
 * every master and deletes key by key (the keys of one SCAN page may sit in different slots).
 */
export async function deleteByPrefix(client: Redis | Cluster, prefix: string): Promise<number> {
  let deleted = 0
  await forEachKeyPage(client, prefix, async (node, keys, perKey) => {
    if (!perKey) deleted += await node.unlink(...keys)
    else {
      const pipeline = node.pipeline()
      for (const key of keys) pipeline.unlink(key)
      for (const [error, count] of (await pipeline.exec()) ?? []) {
        if (error) throw error
        deleted += Number(count)
      }
    }
  })
  return deleted
}

/**
 * Calls `page` with each non-empty SCAN page of keys under `prefix` — keys that start with it and
 * keys whose hash tag opens with it (`{prefix…}…`, e.g. a fencing counter) — on the node or on
 * every cluster master. `perKey` is true on a cluster: the keys of one page may sit in different
 * slots, so multi-key commands over them are refused there.
 */
export async function forEachKeyPage(
  client: Redis | Cluster,
  prefix: string,
  page: (node: Redis, keys: string[], perKey: boolean) => Promise<void>,
): Promise<void> {
  if (!(client instanceof Cluster)) return scanNode(client, prefix, (keys) => page(client, keys, false))
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  for (const node of client.nodes('master')) await scanNode(node, prefix, (keys) => page(node, keys, true))
}

async function scanNode(node: Redis, prefix: string, page: (keys: string[]) => Promise<void>): Promise<void> {
  for (const pattern of [`${prefix}*`, `{${prefix}*`]) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await page(keys)
    } while (cursor !== '0')
  }
}
