// Worker for noscript_reload.test.ts: once the `go` key exists, fires `callers` concurrent
// slidingWindow decisions at a Redis whose script cache the test just flushed, and reports
// how many Redis answered.
// argv: <redisUrl> <prefix> <callers>
import { setTimeout as sleep } from 'node:timers/promises'
import { createRateLimiter, createRedisClient } from '../../../src/index.js'
import { report } from '../../support/processes.js'

const [url = '', prefix = '', callers = '0'] = process.argv.slice(2)
const redis = createRedisClient(url, { commandTimeoutMs: 5000 })
await new Promise((resolve) => redis.once('ready', resolve))
// a 5 s decision timeout: a loaded box must not turn the reload into a fallback answer
const policy = { algorithm: 'slidingWindow', limit: 1000, windowMs: 60_000, timeoutMs: 5000 } as const
// a script call per decision: concurrent calls racing the reload, not one batch
const limiter = createRateLimiter({ redis, prefix, ...policy, batchMaxKeys: 1 })
report({ ready: true })
while ((await redis.exists(`${prefix}:go`)) === 0) await sleep(5)
const results = await Promise.all(
  Array.from({ length: Number(callers) }, (_, i) => limiter.limit(`k${i % 4}`)),
)
report({ done: true, fromRedis: results.filter((r) => r.source === 'redis').length })
redis.disconnect()
