import { setTimeout as sleep } from 'node:timers/promises'
import { createRankings } from '../../../src/index.js'
import { report } from '../../support/processes.js'
import { testRedisClient } from '../../support/redis.js'

// argv: prefix partitions startAtMs queries
const [prefix, partitions, startAt, queries] = process.argv.slice(2)
const redis = testRedisClient()
const rankings = createRankings({
  redis,
  prefix: prefix!,
  partitions: Number(partitions),
  topK: 50,
  cacheTtlMs: 10_000,
  waitMs: 3000,
})
await redis.ping()
report({ ready: true })
await sleep(Math.max(0, Number(startAt) - Date.now()))
const results = await Promise.all(
  Array.from({ length: Number(queries) }, () => rankings.top({ metric: 'plays', window: '1h', limit: 10 })),
)
report({ done: true, results, stats: rankings.stats })
redis.disconnect()
