// Worker for limit_all.test.ts: after a cross-process barrier, fires `calls` limitAll checks
// (policies `outer` then `inner`, one key) with all of them in flight, and reports how many
// were admitted.
// argv: <redisUrl> <prefix> <workers> <calls> <outerLimit> <innerLimit> <windowMs>
import { Redis } from 'ioredis'
import { createRateLimiter, floodgateRedisOptions, limitAll } from '../../../src/index.js'
import { report } from '../../support/processes.js'

const [url, prefix, workers, calls, outerLimit, innerLimit, windowMs] = process.argv.slice(2)
const redis = new Redis(url!, floodgateRedisOptions({ commandTimeoutMs: 5000 }))
await new Promise((resolve) => redis.once('ready', resolve))
const make = (name: string, limit: string) =>
  createRateLimiter({
    redis,
    prefix: prefix!,
    name,
    algorithm: 'fixedWindow',
    limit: Number(limit),
    windowMs: Number(windowMs),
    timeoutMs: 5000,
    fallback: 'failClosed',
  })
const checks = [
  { limiter: make('outer', outerLimit!), key: 'user' },
  { limiter: make('inner', innerLimit!), key: 'user' },
]
const barrier = `${prefix}:barrier`
await redis.incr(barrier)
while (Number(await redis.get(barrier)) < Number(workers)) await new Promise((r) => setTimeout(r, 2))
const results = await Promise.all(Array.from({ length: Number(calls) }, () => limitAll(checks)))
report({ admitted: results.filter((r) => r.allowed).length })
redis.disconnect()
