/**
 * Worker: one flush consumer. Args: prefix partitions schema batchSize claimIdleMs maxDeliveries.
 * Reports { ready }, then { claimed } for every XAUTOCLAIM round that found entries.
 */
import { createInteractionFlush } from '../../../src/interactions/index.js'
import { pgPoolDatabase } from '../../../src/sql/executor.js'
import { report } from '../../support/processes.js'
import { testRedisClient } from '../../support/redis.js'
import { schemaPool } from '../pg_schema.js'

const [prefix, partitions, schema, batchSize, claimIdleMs, maxDeliveries] = process.argv.slice(2)
const redis = testRedisClient(5000)
const pool = schemaPool(schema!, 2)
pool.on('error', () => undefined)
const flush = createInteractionFlush(redis, pgPoolDatabase(pool), {
  prefix: prefix!,
  partitions: Number(partitions),
  batchSize: Number(batchSize),
  blockMs: 200,
  claimIdleMs: Number(claimIdleMs),
  claimIntervalMs: 100,
  maxDeliveries: Number(maxDeliveries),
  onEvent: (event) => {
    if (event.type === 'claimed') report({ claimed: event.count })
    if (event.type === 'error') report({ error: String((event.error as Error)?.message) })
  },
})
flush.start()
report({ ready: true })
process.on('SIGTERM', async () => {
  await flush.stop()
  await pool.end()
  redis.disconnect()
  process.exit(0)
})
