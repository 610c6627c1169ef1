import { createInteractionFlush, createRedisClient } from '../../../src/index.js'
import { pgPoolDatabase } from '../../../src/sql/executor.js'
import { report } from '../../support/processes.js'
import { schemaPool } from '../pg_schema.js'
import { whenReady } from './ready.js'

// argv: redisUrl prefix schema. Flushes until SIGTERM.
const [url, prefix, schema] = process.argv.slice(2)
const redis = createRedisClient(url!, { commandTimeoutMs: 2000 })
const pool = schemaPool(schema!, 2)
const flush = createInteractionFlush(redis, pgPoolDatabase(pool), {
  prefix: prefix!,
  partitions: 4,
  batchSize: 500,
  blockMs: 100,
  claimIdleMs: 1000,
})
await whenReady(redis)
flush.start()
report({ ready: true })
process.once('SIGTERM', async () => {
  await flush.stop()
  redis.disconnect()
  await pool.end()
  process.exit(0)
})
