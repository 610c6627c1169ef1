import { setTimeout as sleep } from 'node:timers/promises'
import { CountsRecovery, type RecoveryEvent } from '../../../src/index.js'
import { pgPoolDatabase } from '../../../src/sql/executor.js'
import { report } from '../../support/processes.js'
import { testRedisClient } from '../../support/redis.js'
import { schemaPool } from '../pg_schema.js'

// argv: prefix schema startAtMs
const [prefix, schema, startAt] = process.argv.slice(2)
const redis = testRedisClient()
const pool = schemaPool(schema!, 2)
const events: RecoveryEvent['type'][] = []
const recovery = new CountsRecovery({
  redis,
  sql: pgPoolDatabase(pool),
  prefix: prefix!,
  partitions: 4,
  checkIntervalMs: 50,
  chunkSize: 50,
  onEvent: (e) => events.push(e.type),
})
await redis.ping()
report({ ready: true })
await sleep(Math.max(0, Number(startAt) - Date.now()))
recovery.start()
const deadline = Date.now() + 20_000
while (recovery.state !== 'ready' && Date.now() < deadline) await sleep(20)
await recovery.stop()
report({ done: true, state: recovery.state, events })
redis.disconnect()
await pool.end()
