/** URL of the shared single-node Redis the tests and the bench use. */
export const TEST_REDIS_URL = process.env.FLOODGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/**
 * Seeds (`host:port`) of a Redis Cluster to run the tests on, from `FLOODGATE_TEST_REDIS_CLUSTER`
 * (comma-separated, e.g. the output of `scripts/redis-cluster/start.sh`); `undefined` when unset.
 */
export const TEST_REDIS_CLUSTER_NODES: readonly string[] | undefined = parseSeeds(
  process.env.FLOODGATE_TEST_REDIS_CLUSTER,
)

/** Comma-separated `host:port` seeds; `undefined` when there are none. */
export function parseSeeds(value: string | undefined): readonly string[] | undefined {
  const seeds = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0)
  return seeds.length > 0 ? seeds : undefined
}
