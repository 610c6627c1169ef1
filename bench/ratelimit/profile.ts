// One scenario in a closed loop, for profiling (`node --cpu-prof`) and quick A/B checks:
//   node --conditions=floodgate-source --import tsx bench/ratelimit/profile.ts <algorithm|leased:algorithm|rlf|incr> [ms]
// The leased mode's two paths apart (bench/ratelimit/run.ts mixes them; limit 1e9, not the defaults, so
// that one path alone runs): `leased-slice:algorithm` (every key holds a slice before the measure, so
// every decision is answered from it), `leased-renew:algorithm` (lease.fraction 1e-9: every slice is
// the cost, so every decision is a lease call, as in the bench's renewal waves); `noop`: the closed
// loop alone (key built, a resolved promise awaited), the floor of every row.
// Prints decisions/s and client CPU µs/decision. env: REDIS_URL, BENCH_CONCURRENCY (64), BENCH_KEYS (10000),
// REDIS_PID: pid of a redis-server on this machine (e.g. a private one) to also print its CPU µs/decision,
// BENCH_BASELINE: path of another floodgate `src/index.ts` (e.g. an older commit's, from `git archive`) to measure instead.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import * as current from 'floodgate'
import { Scenario } from './load.js'

const floodgate = (
  process.env.BENCH_BASELINE ? await import(process.env.BENCH_BASELINE) : current
) as typeof current
const { createRateLimiter, createRedisClient, KeySpace } = floodgate
const which = process.argv[2] ?? 'fixedWindow'
const durationMs = Number(process.argv[3] ?? 5000)
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 64)
const keyCount = Number(process.env.BENCH_KEYS ?? 10_000)
const prefix = `bench:rlp:${process.pid}`
const keyOf = (i: number) => `user-${(i * 7919) % keyCount}`
const redis = createRedisClient(url, { commandTimeoutMs: 5000 })
await new Promise((resolve) => redis.once('ready', resolve))

let op: (i: number) => Promise<unknown>
if (which === 'rlf') {
  const peers = createRequire(new URL('../peers/package.json', import.meta.url))
  const { RateLimiterRedis } = peers('rate-limiter-flexible') as {
    RateLimiterRedis: new (o: Record<string, unknown>) => { consume(k: string): Promise<unknown> }
  }
  const IORedis5 = peers('ioredis') as new (url: string) => unknown
  const rlf = new RateLimiterRedis({
    storeClient: new IORedis5(url),
    keyPrefix: `${prefix}:rlf`,
    points: 100,
    duration: 60,
  })
  op = (i) =>
    rlf.consume(keyOf(i)).catch((e: unknown) => {
      if (e instanceof Error) throw e
    })
} else if (which === 'incr') {
  op = (i) => redis.incr(`${prefix}:incr:${keyOf(i)}`)
} else if (which === 'noop') {
  op = async (i) => {
    if ((await Promise.resolve(keyOf(i))) === '') throw new Error('no key')
  }
} else {
  const [mode, algorithm] = which.includes(':') ? which.split(':') : ['exact', which]
  const leased = mode !== 'exact'
  const limiter = createRateLimiter({
    redis,
    prefix: new KeySpace(prefix),
    algorithm: algorithm as current.RateLimitAlgorithm,
    limit: mode === 'leased' || !leased ? 100 : 1e9,
    windowMs: 60_000,
    timeoutMs: 5000,
    fallback: 'failClosed',
    ...(leased ? { mode: 'leased' as const } : {}),
    ...(mode === 'leased-renew' ? { lease: { fraction: 1e-9 } } : {}),
  })
  if (mode === 'leased-slice') for (let i = 0; i < keyCount; i++) await limiter.limit(keyOf(i))
  // a leased decision answered from the slice (or a cached refusal) makes no Redis call
  const sources = new Set(
    mode === 'leased' ? ['redis', 'lease', 'blockedCache'] : mode === 'leased-slice' ? ['lease'] : ['redis'],
  )
  op = async (i) => {
    const result = await limiter.limit(keyOf(i))
    if (!sources.has(result.source)) throw new Error(`decided by ${result.source}`)
  }
}
/** utime + stime of a process (µs), from /proc/<pid>/stat (Linux, 100 ticks/s). */
const processCpuUs = (pid: string) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}
const redisPid = process.env.REDIS_PID
const scenario = new Scenario(which, op)
await scenario.slice(concurrency, 500, false)
const serverBefore = redisPid ? processCpuUs(redisPid) : 0
await scenario.slice(concurrency, durationMs)
const r = scenario.result()
const server = redisPid
  ? `, redis-server ${((processCpuUs(redisPid) - serverBefore) / r.ops).toFixed(1)} µs CPU/decision`
  : ''
process.stdout.write(
  `${r.name}: ${r.opsPerSec}/s, ${r.cpuUsPerOp} µs CPU/decision${server}, p50 ${r.p50Ms} ms, errors ${r.errors}\n`,
)
let cursor = '0'
do {
  const [next, keys] = (await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)) as [string, string[]]
  cursor = next
  if (keys.length > 0) await redis.unlink(...keys)
} while (cursor !== '0')
process.exit(0)
