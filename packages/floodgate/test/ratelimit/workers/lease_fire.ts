// Worker for leased_processes.test.ts: one process of a leased-mode fleet. Runs each scenario in
// turn, each after a cross-process barrier and from a window edge (Redis clock), and reports its
// admitted decisions: [key index, nowMs, remaining, 1 if answered from the slice else 0], and the
// longest decision that went to Redis (ms).
// argv: <redisUrl> <prefix> <workers> <windowMs> <durationMs> <scenario:algorithm:limit:keys,...>
//   scenario `burst`: 16 callers in a closed loop on random keys among <keys>;
//   scenario `paced`: one decision on key 0 every 5 ms (a load under the quota).
import { Redis } from 'ioredis'
import { createRateLimiter, floodgateRedisOptions, type RateLimitAlgorithm } from '../../../src/index.js'
import { report } from '../../support/processes.js'

const [url, prefix, workers, windowMs, durationMs, scenarios] = process.argv.slice(2)
const redis = new Redis(url!, floodgateRedisOptions({ commandTimeoutMs: 5000 }))
await new Promise((resolve) => redis.once('ready', resolve))
const window = Number(windowMs)
const redisNowMs = async () => {
  const [s, us] = await redis.time()
  return Number(s) * 1000 + Math.floor(Number(us) / 1000)
}

for (const spec of scenarios!.split(',')) {
  const [scenario, algorithm, limit, keys] = spec.split(':') as [string, RateLimitAlgorithm, string, string]
  const limiter = createRateLimiter({
    redis,
    prefix: `${prefix}:${spec}`,
    algorithm,
    limit: Number(limit),
    windowMs: window,
    // a loaded 2-core box: the point is the quota, not the fallback (default 50 ms idle, 2 s wall)
    timeoutMs: 5000,
    fallback: 'failClosed',
    mode: 'leased',
  })
  // the last worker through the barrier names the start: a window edge ≥ 200 ms ahead on the Redis clock
  const startKey = `${prefix}:${spec}:start`
  if ((await redis.incr(`${prefix}:${spec}:barrier`)) === Number(workers)) {
    await redis.set(startKey, Math.ceil(((await redisNowMs()) + 200) / window) * window)
  }
  let startAt = Number(await redis.get(startKey))
  while (startAt === 0) {
    await new Promise((r) => setTimeout(r, 2))
    startAt = Number(await redis.get(startKey))
  }
  const waitMs = startAt - (await redisNowMs())
  await new Promise((r) => setTimeout(r, Math.max(0, waitMs)))

  const admitted: [number, number, number, number][] = []
  const sources: Record<string, number> = {}
  let fired = 0
  // longest decision that went to Redis: bounds how far a slice answer's nowMs lags its true time
  let maxRedisMs = 0
  const decide = async (keyIndex: number) => {
    fired++
    const started = performance.now()
    const result = await limiter.limit(`key-${keyIndex}`)
    if (result.source === 'redis') maxRedisMs = Math.max(maxRedisMs, performance.now() - started)
    sources[result.source] = (sources[result.source] ?? 0) + 1
    if (result.allowed)
      admitted.push([keyIndex, result.nowMs, result.remaining, result.source === 'lease' ? 1 : 0])
  }
  const endAt = performance.now() + Number(durationMs)
  if (scenario === 'burst') {
    const caller = async () => {
      while (performance.now() < endAt) {
        await decide(Math.floor(Math.random() * Number(keys)))
        // an answer from memory resolves at once: yield as a server between requests would
        await new Promise((r) => setImmediate(r))
      }
    }
    await Promise.all(Array.from({ length: 16 }, caller))
  } else {
    const inFlight: Promise<void>[] = []
    while (performance.now() < endAt) {
      inFlight.push(decide(0))
      await new Promise((r) => setTimeout(r, 5))
    }
    await Promise.all(inFlight)
  }
  report({ spec, admitted, sources, fired, maxRedisMs })
}
redis.disconnect()
