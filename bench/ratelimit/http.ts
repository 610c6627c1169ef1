// HTTP cost of the rate-limit plugin on video-api: GET of a path no route serves (404
// problem+json, no DB work; the probes /healthz and /readyz are exempt from every quota, so they
// would measure nothing) with the plugin off, on with every request admitted (answered 404: in the
// service's default leased mode from a slice of the quota, and in exact mode by a Redis decision
// each, those of one poll phase in one script call), and on with every request rejected (429; the
// blocked cache answers without Redis). Each server is video-api's main.ts
// in its own process (embedded PGlite, LOG_LEVEL=warn), autocannon here, interleaved rounds;
// results written to bench/results/ratelimit-http.json. Service CPU µs/request (utime + stime of
// the service process over the measured rounds, /proc/<pid>/stat) is the figure a noisy box moves
// least; "plugin µs" is a mode's CPU per request minus the plugin-off server's.
//
//   node --conditions=floodgate-source --import tsx bench/ratelimit/http.ts
//   env: REDIS_URL (redis://127.0.0.1:6379), BENCH_DURATION_S (5 per mode, split over BENCH_ROUNDS (3)), BENCH_CONNECTIONS (64),
//   BENCH_BASELINE_MAIN: another checkout's apps/video-api/src/main.ts (e.g. an older commit's `git archive`,
//   with a node_modules whose floodgate and video-api links point into that checkout) whose plugin modes run
//   as extra "<mode>@baseline" servers in the same interleaved rounds.
import type { ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '@floodgate/test-support'
import { processCpuMs } from '../support/process_cpu.js'
import { spawnTs } from '../support/spawn_ts.js'

type Result = {
  requests: { total: number }
  latency: { p50: number; p99: number }
  duration: number
  non2xx: number
  errors: number
  timeouts: number
  statusCodeStats: Record<string, { count: number }>
}
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: Record<string, unknown>,
  done: (error: Error | null, result: Result) => void,
) => unknown

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const durationS = Number(process.env.BENCH_DURATION_S ?? 5)
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
// the service's default limiter mode (leased), and exact: one Redis decision per request
const pluginModes = ['off', 'allowed', 'allowed-exact', 'rejected'] as const
type PluginMode = (typeof pluginModes)[number]
const baselineMain = process.env.BENCH_BASELINE_MAIN
const modes: string[] = [
  ...pluginModes,
  ...(baselineMain ? pluginModes.filter((m) => m !== 'off').map((m) => `${m}@baseline`) : []),
]
/** Unrouted: the not-found handler answers, behind the rate-limit hook like any route. */
const PATH = '/bench/no-such-route'

/** video-api's own entry point (main.ts) on an embedded PGlite in a temp folder, configured by env. */
async function startServer(name: string): Promise<{ child: ChildProcess; port: number; dir: string }> {
  const port = await freePort()
  const dir = mkdtempSync(join(tmpdir(), 'fg-rlhttp-'))
  const baseline = name.endsWith('@baseline')
  const mode = name.replace('@baseline', '') as PluginMode
  const main =
    baseline && baselineMain
      ? baselineMain
      : fileURLToPath(new URL('../../apps/video-api/src/main.ts', import.meta.url))
  const child = spawnTs(main, [], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      REDIS_URL: url,
      REDIS_PREFIX: `bench-rlhttp-${process.pid}-${name.replace('@', '-')}`,
      DATA_DIR: dir,
      SEED_ON_EMPTY: 'false',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_ENABLED: mode === 'off' ? 'false' : 'true',
      // allowed: every request decided by Redis and admitted; rejected: 429 after the first
      RATE_LIMIT_ANONYMOUS_LIMIT: mode === 'rejected' ? '1' : '1000000',
      ...(mode === 'allowed-exact' ? { RATE_LIMIT_MODE: 'exact' } : {}),
    },
  })
  const deadline = Date.now() + 120_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`video-api (${name}) exited with ${child.exitCode}`)
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status === 200 || r.status === 429,
      () => false,
    )
    if (up) return { child, port, dir }
    if (Date.now() > deadline) throw new Error(`video-api (${name}) did not start`)
    await new Promise((r) => setTimeout(r, 250))
  }
}

const totals = Object.fromEntries(
  modes.map((m) => [
    m,
    {
      requests: 0,
      seconds: 0,
      cpuMs: 0,
      p50: [] as number[],
      p99: [] as number[],
      codes: {} as Record<string, number>,
    },
  ]),
)
const servers: Record<string, Awaited<ReturnType<typeof startServer>>> = {}
for (const mode of modes) servers[mode] = await startServer(mode) // one at a time: PGlite start-up is CPU-heavy
const hit = (port: number, duration: number) =>
  new Promise<Result>((resolve, reject) =>
    autocannon({ url: `http://127.0.0.1:${port}${PATH}`, connections, duration }, (error, r) =>
      error ? reject(error) : resolve(r),
    ),
  )
try {
  for (const mode of modes) await hit(servers[mode]!.port, 2) // warm-up (JIT, script cache), not recorded
  for (let round = 0; round < rounds; round++) {
    for (const mode of modes) {
      const { child, port } = servers[mode]!
      const cpuBefore = processCpuMs(child.pid!)
      const result = await hit(port, durationS / rounds)
      const t = totals[mode]!
      t.cpuMs += processCpuMs(child.pid!) - cpuBefore
      t.requests += result.requests.total
      t.seconds += result.duration
      t.p50.push(result.latency.p50)
      t.p99.push(result.latency.p99)
      for (const [code, stat] of Object.entries(result.statusCodeStats))
        t.codes[code] = (t.codes[code] ?? 0) + stat.count
      process.stderr.write(
        `round ${round + 1}/${rounds} ${mode}: ${Math.round(result.requests.total / result.duration)} req/s\n`,
      )
    }
  }
} finally {
  for (const { child, dir } of Object.values(servers)) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
    rmSync(dir, { recursive: true, force: true })
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const rows = modes.map((mode) => {
  const t = totals[mode]!
  return {
    mode,
    reqPerSec: Math.round(t.requests / t.seconds),
    cpuUsPerRequest: Math.round((t.cpuMs * 1000) / t.requests),
    p50Ms: median(t.p50),
    p99Ms: median(t.p99),
    codes: t.codes,
  }
})
const base = rows[0]!
const lines = [
  `video-api GET ${PATH} (404), ${connections} connections, ${durationS} s per mode in ${rounds} interleaved rounds, Redis ${url}`,
  '',
  '| rate limiting | req/s | p50 ms | p99 ms | req/s vs off | service CPU µs/request | plugin µs/request | status codes |',
  '|---|---:|---:|---:|---:|---:|---:|---|',
  ...rows.map(
    (r) =>
      `| ${r.mode} | ${r.reqPerSec} | ${r.p50Ms} | ${r.p99Ms} | ${(r.reqPerSec / base.reqPerSec).toFixed(2)} | ${r.cpuUsPerRequest} | ${r.cpuUsPerRequest - base.cpuUsPerRequest} | ${Object.entries(
        r.codes,
      )
        .map(([c, n]) => `${c}: ${n}`)
        .join(', ')} |`,
  ),
]
process.stdout.write(`${lines.join('\n')}\n`)
mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
writeFileSync(
  new URL('../results/ratelimit-http.json', import.meta.url),
  `${JSON.stringify({ at: new Date().toISOString(), baseline: baselineMain, url, durationS, rounds, connections, rows }, null, 2)}\n`,
)
