// Worker for exactness.test.ts: fires `total` decisions per algorithm at one key with
// `concurrency` callers in flight, after a cross-process barrier, and reports the Redis
// times (ms) of the admitted decisions.
// argv: <redisUrl> <prefix> <workers> <total> <concurrency> <limit> <windowMs> <algorithm,...>
import { Redis } from 'ioredis'
import { createRateLimiter, floodgateRedisOptions, type RateLimitAlgorithm } from '../../../src/index.js'
import { report } from '../../support/processes.js'

const [url, prefix, workers, total, concurrency, limit, windowMs, algorithms] = process.argv.slice(2)
const redis = new Redis(url!, floodgateRedisOptions({ commandTimeoutMs: 5000 }))
await new Promise((resolve) => redis.once('ready', resolve))

for (const algorithm of algorithms!.split(',') as RateLimitAlgorithm[]) {
  const limiter = createRateLimiter({
    redis,
    prefix: prefix!,
    algorithm,
    limit: Number(limit),
    windowMs: Number(windowMs),
    timeoutMs: 5000,
    fallback: 'failClosed',
  })
  const barrier = `${prefix}:barrier:${algorithm}`
  await redis.incr(barrier)
  while (Number(await redis.get(barrier)) < Number(workers)) await new Promise((r) => setTimeout(r, 2))

  const admitted: number[] = []
  let fired = 0
  let fallbacks = 0
  const caller = async () => {
    while (fired < Number(total)) {
      fired++
      const result = await limiter.limit('hot')
      if (result.source !== 'redis') fallbacks++
      else if (result.allowed) admitted.push(result.nowMs)
    }
  }
  await Promise.all(Array.from({ length: Number(concurrency) }, caller))
  report({ algorithm, admitted, fired, fallbacks })
}
redis.disconnect()
