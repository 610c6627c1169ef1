// Rate-limit decisions: throughput and latency per algorithm against a raw INCR round
// trip and rate-limiter-flexible's RateLimiterRedis, at the same concurrency, in one run
// against one Redis; then Redis memory per limiter key (MEMORY USAGE).
//
//   node --conditions=floodgate-source --import tsx bench/ratelimit/run.ts
//   env: REDIS_URL (redis://127.0.0.1:6379), BENCH_DURATION_MS (5000 per scenario, split over
//   BENCH_ROUNDS (5) interleaved rounds), BENCH_CONCURRENCY (64), BENCH_KEYS (10000),
//   BENCH_BASELINE: path of another floodgate `src/index.ts` (e.g. an older commit's, extracted with
//   `git archive <commit> packages/floodgate | tar -x -C /tmp/base`, plus a node_modules symlink) whose
//   limiters (exact and leased) run as extra "floodgate@baseline" scenarios in the same interleaved rounds;
//   BENCH_ONLY: a regular expression, only the scenarios whose name matches run (plus the RLF reference).
import { mkdirSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { deleteByPrefix } from '@floodgate/test-support'
import * as floodgate from 'floodgate'
import { type LoadResult, median, Scenario } from './load.js'

interface PeerRedis {
  incr(key: string): Promise<number>
  call(...args: (string | number)[]): Promise<unknown>
  scan(cursor: string, ...args: (string | number)[]): Promise<[string, string[]]>
  unlink(...keys: string[]): Promise<number>
  quit(): Promise<unknown>
}
interface PeerLimiter {
  consume(key: string, points?: number): Promise<unknown>
}

const { createRateLimiter, createRedisClient, KeySpace, rateLimitKeys } = floodgate
type RateLimitAlgorithm = floodgate.RateLimitAlgorithm
const baselinePath = process.env.BENCH_BASELINE
const baseline = baselinePath ? ((await import(baselinePath)) as typeof floodgate) : undefined

const peers = createRequire(new URL('../peers/package.json', import.meta.url))
const { RateLimiterRedis } = peers('rate-limiter-flexible') as {
  RateLimiterRedis: new (options: Record<string, unknown>) => PeerLimiter
}
const IORedis5 = peers('ioredis') as new (url: string, options?: Record<string, unknown>) => PeerRedis
const rlfVersion = (peers('rate-limiter-flexible/package.json') as { version: string }).version

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const durationMs = Number(process.env.BENCH_DURATION_MS ?? 5000)
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 64)
const keyCount = Number(process.env.BENCH_KEYS ?? 10_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const LIMIT = 100
const WINDOW_MS = 60_000
const ALGORITHMS: RateLimitAlgorithm[] = ['fixedWindow', 'slidingLog', 'slidingWindow', 'tokenBucket', 'gcra']
const LEASED_ALGORITHMS: RateLimitAlgorithm[] = ['fixedWindow', 'slidingWindow']

const prefix = `bench:rl:${process.pid}`
const keySpace = new KeySpace(prefix)
const redis = createRedisClient(url, { commandTimeoutMs: 5000 })
// floodgate on a client with ioredis' auto-pipelining (decisions of one tick share a write).
const redisAutoPipelined = createRedisClient(url, {
  commandTimeoutMs: 5000,
  redis: { enableAutoPipelining: true },
})
const peerRedis = new IORedis5(url, { enableOfflineQueue: true })
// The peer with ioredis' own write batching (commands of one tick in one pipeline), for fairness.
const peerRedisPipelined = new IORedis5(url, { enableOfflineQueue: true, enableAutoPipelining: true })
await new Promise((resolve) => redis.once('ready', resolve))
if (redisAutoPipelined.status !== 'ready')
  await new Promise((resolve) => redisAutoPipelined.once('ready', resolve))
const keyOf = (i: number) => `user-${(i * 7919) % keyCount}`

async function cleanup(): Promise<void> {
  await deleteByPrefix(peerRedis, prefix)
}

const rlf = new RateLimiterRedis({
  storeClient: peerRedis,
  keyPrefix: `${prefix}:rlf`,
  points: LIMIT,
  duration: WINDOW_MS / 1000,
})
const rlfPipelined = new RateLimiterRedis({
  storeClient: peerRedisPipelined,
  keyPrefix: `${prefix}:rlfap`,
  points: LIMIT,
  duration: WINDOW_MS / 1000,
})
const rlfConsume = (limiter: PeerLimiter, key: string) =>
  limiter.consume(key).catch((rejection: unknown) => {
    if (rejection instanceof Error) throw rejection // a store error; a RateLimiterRes is a rejection
  })
/** Per floodgate scenario: decisions, and those that took a Redis round trip (source `redis`). */
const roundTrips = new Map<string, { decisions: number; redis: number }>()
const floodgateScenario = (
  label: string,
  lib: typeof floodgate,
  algorithm: RateLimitAlgorithm,
  client: floodgate.RedisClient = redis,
  mode: 'exact' | 'leased' | 'prefetch' = 'exact',
) => {
  const name = `${label} ${algorithm}`
  const limiter = lib.createRateLimiter({
    redis: client,
    prefix: new lib.KeySpace(prefix),
    name: `${algorithm}-${mode}`,
    algorithm,
    limit: LIMIT,
    windowMs: WINDOW_MS,
    timeoutMs: 5000,
    fallback: 'failClosed',
    ...(mode === 'exact' ? {} : { mode: 'leased' as const }),
    ...(mode === 'prefetch' ? { lease: { prefetch: true } } : {}),
  })
  const count = { decisions: 0, redis: 0 }
  roundTrips.set(name, count)
  // a leased decision answered from the slice (or a cached refusal) makes no Redis call
  const local = new Set(mode === 'exact' ? [] : ['lease', 'blockedCache'])
  return new Scenario(name, async (i) => {
    const result = await limiter.limit(keyOf(i))
    count.decisions++
    if (result.source === 'redis') count.redis++
    else if (!local.has(result.source)) throw new Error(`decided by ${result.source}`)
  })
}
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined
const rlfName = `rate-limiter-flexible ${rlfVersion} RateLimiterRedis`
const allScenarios = [
  new Scenario('raw INCR (ioredis 6)', (i) => redis.incr(`${prefix}:incr:${keyOf(i)}`)),
  new Scenario('raw INCR (ioredis 5)', (i) => peerRedis.incr(`${prefix}:incr5:${keyOf(i)}`)),
  new Scenario(rlfName, (i) => rlfConsume(rlf, keyOf(i))),
  new Scenario(`rate-limiter-flexible ${rlfVersion} RateLimiterRedis, ioredis autopipelining`, (i) =>
    rlfConsume(rlfPipelined, keyOf(i)),
  ),
  ...ALGORITHMS.map((algorithm) => floodgateScenario('floodgate', floodgate, algorithm)),
  ...LEASED_ALGORITHMS.map((algorithm) =>
    floodgateScenario('floodgate leased', floodgate, algorithm, redis, 'leased'),
  ),
  ...LEASED_ALGORITHMS.map((algorithm) =>
    floodgateScenario('floodgate leased prefetch', floodgate, algorithm, redis, 'prefetch'),
  ),
  ...ALGORITHMS.map((algorithm) =>
    floodgateScenario('floodgate autopipelining', floodgate, algorithm, redisAutoPipelined),
  ),
  ...(baseline
    ? [
        ...ALGORITHMS.map((algorithm) => floodgateScenario('floodgate@baseline', baseline, algorithm)),
        ...LEASED_ALGORITHMS.map((algorithm) =>
          floodgateScenario('floodgate@baseline leased', baseline, algorithm, redis, 'leased'),
        ),
      ]
    : []),
]
const scenarios = allScenarios.filter((s) => s.name === rlfName || only === undefined || only.test(s.name))
// Rounds interleave the scenarios so a noisy neighbour hits them all alike.
for (let round = 0; round < rounds; round++) {
  for (const scenario of scenarios) {
    await cleanup()
    if (round === 0) await scenario.slice(concurrency, 500, false) // warm-up: JIT, script cache
    await scenario.slice(concurrency, durationMs / rounds)
    process.stderr.write(`round ${round + 1}/${rounds} ${scenario.name}\n`)
  }
}
const results: LoadResult[] = scenarios.map((s) => s.result())

// Memory per limiter key with the quota fully used (LIMIT admitted units).
const memory: { name: string; bytes: number; keys: number }[] = []
await cleanup()
for (const algorithm of ALGORITHMS) {
  const limiter = createRateLimiter({ redis, prefix: keySpace, algorithm, limit: LIMIT, windowMs: WINDOW_MS })
  for (let i = 0; i < LIMIT; i++) await limiter.limit('memory-probe')
  let bytes = 0
  let keys = 0
  for (const key of rateLimitKeys(keySpace, limiter.policy, 'memory-probe')) {
    const usage = (await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) as number | null
    if (usage !== null) {
      bytes += usage
      keys++
    }
  }
  memory.push({ name: `floodgate ${algorithm}`, bytes, keys })
}
for (let i = 0; i < LIMIT; i++) await rlf.consume('memory-probe').catch(() => {})
const rlfBytes = (await peerRedis.call(
  'MEMORY',
  'USAGE',
  `${prefix}:rlf:memory-probe`,
  'SAMPLES',
  '0',
)) as number
memory.push({ name: 'rate-limiter-flexible RateLimiterRedis', bytes: rlfBytes, keys: 1 })
await cleanup()

const peer = results.find((r) => r.name === rlfName)!
/** Round trips per decision of a floodgate scenario (warm-up included); blank for the others. */
const roundTripsOf = (name: string) => {
  const count = roundTrips.get(name)
  return count && count.decisions > 0 ? (count.redis / count.decisions).toFixed(3) : ''
}
/** Median over rounds of this scenario's decisions/s divided by RLF's in the same round. */
const vsPeer = (r: LoadResult) => median(r.sliceOpsPerSec.map((ops, i) => ops / peer.sliceOpsPerSec[i]!))
const lines = [
  `Rate-limit decisions, ${concurrency} in flight, ${durationMs} ms each in ${rounds} interleaved rounds, ${keyCount} keys, limit ${LIMIT}/${WINDOW_MS / 1000} s, Redis ${url}`,
  '',
  'Medians over the rounds; "vs RLF" is the median of per-round ratios to RateLimiterRedis; CPU is this process (user + system).',
  '',
  '| scenario | decisions/s | vs RLF | client CPU µs/decision | p50 ms | p99 ms | errors | Redis round trips/decision |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.name} | ${r.medianOpsPerSec} | ${vsPeer(r).toFixed(2)} | ${r.medianCpuUsPerOp} | ${r.p50Ms.toFixed(3)} | ${r.p99Ms.toFixed(3)} | ${r.errors} | ${roundTripsOf(r.name)} |`,
  ),
  '',
  `Redis memory per limiter key after ${LIMIT} admitted units (MEMORY USAGE … SAMPLES 0, all keys of one limiter key)`,
  '',
  '| limiter | bytes | Redis keys |',
  '|---|---:|---:|',
  ...memory.map((m) => `| ${m.name} | ${m.bytes} | ${m.keys} |`),
]
process.stdout.write(`${lines.join('\n')}\n`)
mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
writeFileSync(
  new URL('../results/ratelimit.json', import.meta.url),
  `${JSON.stringify({ at: new Date().toISOString(), baseline: baselinePath ?? null, url, durationMs, rounds, concurrency, keyCount, limit: LIMIT, windowMs: WINDOW_MS, results, memory }, null, 2)}\n`,
)
redis.disconnect()
redisAutoPipelined.disconnect()
await peerRedis.quit()
await peerRedisPipelined.quit()
