/**
 * Worker: one interaction flush consumer on a Redis Cluster.
 * Args: seeds (comma-separated host:port) prefix partitions schema.
 * Reports { ready } once started; on SIGTERM stops (finishing its batch),
 * reports { stopped, stats } and exits.
 */
import { createInteractionFlush } from '../../../src/interactions/index.js'
import { createRedisClient } from '../../../src/redis/index.js'
import { pgPoolDatabase } from '../../../src/sql/executor.js'
import { schemaPool } from '../../counters/pg_schema.js'
import { report } from '../../support/processes.js'

const [seeds, prefix, partitions, schema] = process.argv.slice(2)
const redis = createRedisClient(seeds!.split(','), {
  commandTimeoutMs: 5000,
  redis: { enableOfflineQueue: true },
  cluster: { enableOfflineQueue: true },
})
const pool = schemaPool(schema!, 2)
pool.on('error', () => undefined)
const flush = createInteractionFlush(redis, pgPoolDatabase(pool), {
  prefix: prefix!,
  partitions: Number(partitions),
  batchSize: 50,
  blockMs: 100,
  pollIntervalMs: 20,
  claimIdleMs: 2000,
  onEvent: (event) => {
    if (event.type === 'error') report({ error: String((event.error as Error)?.message) })
  },
})
await flush.ensureGroups()
flush.start()
report({ ready: true, name: flush.name })
process.on('SIGTERM', async () => {
  await flush.stop()
  report({ stopped: true, stats: { ...flush.stats } })
  await pool.end()
  redis.disconnect()
  process.exit(0)
})
