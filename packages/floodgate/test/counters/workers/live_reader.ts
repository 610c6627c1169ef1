import { CountsReader, createRedisClient, type FallbackCounts, LiveCounts } from '../../../src/index.js'
import { pgPoolDatabase } from '../../../src/sql/executor.js'
import { report } from '../../support/processes.js'
import { schemaPool } from '../pg_schema.js'
import { whenReady } from './ready.js'

// argv: redisUrl prefix schema reads. One service instance under a burst: `reads` concurrent
// anonymous reads of video 1 through its own LiveCounts, the fallback on the PostgreSQL columns.
const [url, prefix, schema, reads] = process.argv.slice(2)
const redis = createRedisClient(url!, { commandTimeoutMs: 2000 })
const pool = schemaPool(schema!, 2)
const sql = pgPoolDatabase(pool)
let fallbackCalls = 0
const live = new LiveCounts({
  reader: new CountsReader({ redis, prefix: prefix!, partitions: 4, timeoutMs: 500 }),
  fallback: async (ids) => {
    fallbackCalls++
    const { rows } = await sql.query<{ id: string; l: number }>(
      'SELECT id::text AS id, like_count::int AS l FROM items WHERE id = ANY($1::bigint[])',
      [ids],
    )
    return new Map(rows.map((r): [string, FallbackCounts] => [r.id, { likes: r.l, favorites: 0, plays: 0 }]))
  },
})
await whenReady(redis)
const answers = await Promise.all(Array.from({ length: Number(reads) }, () => live.read(['1'])))
report({
  done: true,
  answered: answers.filter((a) => a.counts.has('1')).length,
  likes: [...new Set(answers.map((a) => a.counts.get('1')?.likes))],
  stale: answers.filter((a) => a.counts.get('1')?.stale).length,
  redisReads: live.stats.redisBatches,
  fallbackCalls,
})
redis.disconnect()
await pool.end()
