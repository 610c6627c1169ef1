import { setTimeout as sleep } from 'node:timers/promises'
import { CountsReader, CountsRecovery, createRedisClient, type RecoveryEvent } from '../../../src/index.js'
import { pgPoolDatabase } from '../../../src/sql/executor.js'
import { report } from '../../support/processes.js'
import { schemaPool } from '../pg_schema.js'
import { whenReady } from './ready.js'

// argv: redisUrl prefix schema durationMs. What a service instance does: monitor the epoch,
// read counts for a page of 20 videos, fall back to the DB columns (stale) when Redis can't answer.
const [url, prefix, schema, duration] = process.argv.slice(2)
const redis = createRedisClient(url!, { commandTimeoutMs: 1000 })
const pool = schemaPool(schema!, 2)
const sql = pgPoolDatabase(pool)
const events: RecoveryEvent['type'][] = []
const recovery = new CountsRecovery({
  redis,
  sql,
  prefix: prefix!,
  partitions: 4,
  checkIntervalMs: 200,
  chunkSize: 100,
  onEvent: (e) => events.push(e.type),
})
const reader = new CountsReader({ redis, prefix: prefix!, partitions: 4, recovery, timeoutMs: 500 })
const ids = Array.from({ length: 20 }, (_, i) => String(i + 1))
await whenReady(redis)
recovery.start()
while (!recovery.serving()) await sleep(10)
report({ ready: true })
const end = Date.now() + Number(duration)
const served = { redis: 0, db: 0, failed: 0 }
const staleReasons: Record<string, number> = {}
let redisAfterDb = 0
while (Date.now() < end) {
  const read = await reader.readCounts(ids, '1')
  if (read.ok && read.counts.size === ids.length) {
    served.redis++
    if (served.db > 0) redisAfterDb++
  } else {
    if (!read.ok) staleReasons[read.reason] = (staleReasons[read.reason] ?? 0) + 1
    try {
      const { rows } = await sql.query('SELECT id, like_count FROM items WHERE id = ANY($1::bigint[])', [ids])
      if (rows.length === ids.length) served.db++
      else served.failed++
    } catch {
      served.failed++
    }
  }
  await sleep(20)
}
await recovery.stop()
report({ done: true, served, staleReasons, redisAfterDb, events, state: recovery.state })
redis.disconnect()
await pool.end()
