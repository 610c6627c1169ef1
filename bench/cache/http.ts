// GET /videos/:id side by side in one run: a bare Fastify process answering one constant video
// (the ceiling, bench/cache/bare_server.ts), optionally (`catalog`) a bare Fastify process answering
// every public video's JSON text from a Map (the same ids and working set as the service: the
// ceiling of any in-process cache), the real service uncached (CACHE_ENABLED=false) and cached.
// Closed loop: autocannon in its own process (bench/http/get-video.ts), Zipf(1) over the seeded
// popularity, `--connections` connections.
//   node --conditions=floodgate-source --import tsx bench/cache/http.ts --db postgres://postgres@127.0.0.1:5432/va_bench_cache
// The database must be seeded first (npm run seed -w video-api -- --users 2000 --videos 20000).
// Interleaved rounds on a shared box, medians reported:
//   ... bench/cache/http.ts --modes bare,uncached,cached,bare,uncached,cached [--warmup 10] [--label name]
// Per request, over the measured run only:
// - service CPU ms: utime + stime of the service process (/proc/<pid>/stat, every thread);
// - Redis commands: `total_commands_processed` of a private redis-server per service run (so no
//   other client is counted), which includes the commands scripts run, with the top commands
//   from INFO commandstats;
// - Redis round trips: data segments the service sent to that redis-server (`ss`, see
//   bench/support/tcp_segments.ts): one per command, pipeline or auto-pipelined batch written;
// - DB transactions: pg_stat_database.xact_commit of the bench database (every read is one statement).
// The service runs with its defaults except: its own Redis and database (above), a JWT secret
// (else one is written into DATA_DIR), and RATE_LIMIT_ANONYMOUS_LIMIT=1000000 per 60 s: the
// limiter is on, as by default, but all load comes from one IP and the default quota (300 per
// minute) would turn it into 429s. `--env K=V,…` adds bench-only overrides (e.g.
// RATE_LIMIT_ENABLED=false to see the ceiling without the limiter); they are printed and saved.
// `--cpu-prof <dir>` profiles the process under test (one .cpuprofile per thread under <dir>/<mode>).
// Every service run starts on an empty cache (a fresh redis-server), then GETs every id once and runs
// the timed warm-up, so the measured run is a steady state however fast the service is.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { freePort, PrivateRedis } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import pg from 'pg'
import { envOverrides, sweep, videoApiReady, waitUntil, zipfLoad } from '../support/http_service.js'
import { popularIds } from '../support/popular_ids.js'
import { processCpuMs } from '../support/process_cpu.js'
import { TS_NODE_FLAGS } from '../support/spawn_ts.js'
import { dataSegmentsOut } from '../support/tcp_segments.js'

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/va_bench_cache' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '32' },
    warmup: { type: 'string', default: '15' },
    label: { type: 'string', default: '' },
    // comma-separated modes to run, in order (e.g. bare,uncached,cached,bare,uncached,cached for interleaved rounds)
    modes: { type: 'string', default: 'bare,uncached,cached' },
    // bench-only environment overrides of the service, K=V,K=V
    env: { type: 'string', default: '' },
    // directory for --cpu-prof profiles of the process under test (none when empty)
    'cpu-prof': { type: 'string', default: '' },
  },
})
const root = fileURLToPath(new URL('../../', import.meta.url))
type Mode = 'bare' | 'catalog' | 'uncached' | 'cached'
const isBare = (mode: Mode) => mode === 'bare' || mode === 'catalog'
const overrides = envOverrides(values.env!)

async function transactions(): Promise<number> {
  const client = new pg.Client({ connectionString: values.db })
  await client.connect()
  const { rows } = await client.query<{ n: string }>(
    'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
  )
  await client.end()
  return Number(rows[0]?.n ?? 0)
}

/**
 * Videos as video-api's toVideo shapes them (`video`, with `v.id` as `id`)
 * from the rest of a query (`from … where … order by …`).
 */
async function videoRows(rest: string): Promise<{ id: string; video: unknown }[]> {
  const client = new pg.Client({ connectionString: values.db })
  await client.connect()
  try {
    const { rows } = await client.query<{ id: string; video: unknown }>(`
      select v.id::text as id, json_build_object(
        'id', v.id::text, 'authorId', v.author_id::text, 'title', v.title, 'description', v.description,
        'coverUrl', v.cover_url, 'playUrl', v.play_url, 'visibility', v.visibility, 'status', v.status,
        'likeCount', v.like_count, 'favoriteCount', v.favorite_count, 'playCount', v.play_count,
        'createdAt', to_char(v.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
        'updatedAt', to_char(v.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')) as video
      ${rest}`)
    return rows
  } finally {
    await client.end()
  }
}

/** The most popular video in the API's shape: the bare route's answer. */
async function popularVideoJson(): Promise<string> {
  const rows = await videoRows(
    'from video_popularity p join videos v on v.id = p.video_id order by p.rank limit 1',
  )
  if (rows.length === 0) throw new Error('no seeded videos: run npm run seed first')
  return JSON.stringify(rows[0]!.video)
}

/** Every public video's JSON text in the API's shape, by id: the `catalog` server's Map, as a file. */
async function catalogFile(): Promise<string> {
  const rows = await videoRows(
    "from videos v where v.deleted_at is null and v.status = 'published' and v.visibility = 'public'",
  )
  const file = join(tmpdir(), `floodgate-bench-catalog-${process.pid}.json`)
  writeFileSync(file, JSON.stringify(Object.fromEntries(rows.map((r) => [r.id, JSON.stringify(r.video)]))))
  process.once('exit', () => rmSync(file, { force: true }))
  return file
}

/** INFO stats + commandstats: commands processed so far, and calls per command. */
async function redisCounters(redis: Redis): Promise<{ total: number; calls: Map<string, number> }> {
  const info = await redis.info('stats', 'commandstats')
  const total = Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? 0)
  const calls = new Map<string, number>()
  for (const m of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g)) calls.set(m[1]!, Number(m[2]))
  return { total, calls }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  const force = setTimeout(() => child.kill('SIGKILL'), 10_000)
  await exited
  clearTimeout(force)
}

async function measure(mode: Mode, bareVideo: string, catalog: string | undefined) {
  const port = await freePort()
  const redisServer = isBare(mode) ? undefined : await PrivateRedis.start()
  const profile = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}/${mode}`] : []
  const env: NodeJS.ProcessEnv =
    mode === 'bare'
      ? { ...process.env, PORT: String(port), BARE_VIDEO_JSON: bareVideo }
      : mode === 'catalog'
        ? { ...process.env, PORT: String(port), BARE_CATALOG_FILE: catalog }
        : {
            ...process.env,
            PORT: String(port),
            DATABASE_URL: values.db,
            REDIS_URL: redisServer!.url,
            CACHE_ENABLED: mode === 'cached' ? 'true' : 'false',
            RATE_LIMIT_ANONYMOUS_LIMIT: '1000000',
            JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
            ...overrides,
          }
  const entry = isBare(mode) ? 'bench/cache/bare_server.ts' : 'apps/video-api/src/main.ts'
  // the service's log goes to /dev/null: a pipe read by this process would cost this process CPU
  const service = spawn(process.execPath, [...profile, ...TS_NODE_FLAGS, entry], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const killService = () => service.kill('SIGKILL')
  process.once('exit', killService)
  const base = `http://127.0.0.1:${port}`
  if (isBare(mode)) await waitUntil(`${base}/videos/x`, (status) => status > 0, 'bare server')
  else if (mode === 'uncached')
    await waitUntil(`${base}/readyz`, (status) => status === 200, 'service (uncached)')
  // cached: also waits for the Bloom replica (the filter is rebuilt from the database at start)
  else await videoApiReady(base, 'service (cached)')
  console.error(`ready (${mode})`)
  const load = (durationS: string) =>
    zipfLoad({ base, db: values.db!, durationS: Number(durationS), connections: Number(values.connections) })
  // not measured: every id once (into the cache, or PostgreSQL's buffers), then the timed warm-up
  if (!isBare(mode)) await sweep(base, await popularIds(values.db!), Number(values.connections))
  await load(values.warmup!)
  await sleep(1500)
  const redis = redisServer ? new Redis(redisServer.url) : undefined
  const pid = service.pid!
  const redisPort = redisServer?.port ?? 0
  const before = {
    xacts: await transactions(),
    cpuMs: processCpuMs(pid),
    redis: redis ? await redisCounters(redis) : undefined,
    segments: redisServer ? dataSegmentsOut(pid, redisPort) : 0,
  }
  const summary = await load(values.duration!)
  const after = {
    cpuMs: processCpuMs(pid),
    segments: redisServer ? dataSegmentsOut(pid, redisPort) : 0,
    redis: redis ? await redisCounters(redis) : undefined,
  }
  console.error(`load done (${mode})`)
  await sleep(1500) // statistics are flushed by backends within about a second
  const afterXacts = await transactions()
  const n = summary.totalRequests
  const perRequest = (x: number, digits = 3) => +(x / n).toFixed(digits)
  let cacheOutcomes: Record<string, number> = {}
  if (mode === 'cached') {
    const metrics = await fetch(`${base}/metrics`).then((r) => r.text())
    cacheOutcomes = Object.fromEntries(
      [...metrics.matchAll(/floodgate_cache_events_total\{cache="video",outcome="(\w+)"\} (\d+)/g)]
        .filter((m) => m[2] !== '0')
        .map((m) => [m[1], Number(m[2])]),
    )
  }
  await stopChild(service)
  process.removeListener('exit', killService)
  redis?.disconnect()
  await redisServer?.destroy()
  // the "before" INFO is counted in the "after" reading
  const commands = before.redis && after.redis ? after.redis.total - before.redis.total - 1 : 0
  const topCommands = Object.fromEntries(
    [...(after.redis?.calls ?? new Map<string, number>())]
      .map(([name, calls]) => [name, perRequest(calls - (before.redis?.calls.get(name) ?? 0))] as const)
      .filter(([name, x]) => x >= 0.01 && name !== 'info')
      .sort((a, b) => b[1] - a[1]),
  )
  // bare: no database; the popularity query of get-video.ts is one transaction, subtracted here
  const dbTransactions = isBare(mode) ? 0 : afterXacts - before.xacts - 1
  return {
    mode,
    ...summary,
    cpuMsPerRequest: perRequest(after.cpuMs - before.cpuMs),
    redisCommandsPerRequest: perRequest(commands),
    redisRoundTripsPerRequest: perRequest(after.segments - before.segments),
    redisCommandsPerRequestByName: topCommands,
    dbQueriesPerRequest: perRequest(dbTransactions, 4),
    cacheOutcomesIncludingWarmup: cacheOutcomes,
  }
}

const modes = values.modes!.split(',').map((m) => m.trim())
for (const mode of modes)
  if (!['bare', 'catalog', 'uncached', 'cached'].includes(mode)) throw new Error(`unknown mode ${mode}`)
const bareVideo = await popularVideoJson()
const catalog = modes.includes('catalog') ? await catalogFile() : undefined
const rows: Awaited<ReturnType<typeof measure>>[] = []
for (const mode of modes as Mode[]) rows.push(await measure(mode, bareVideo, catalog))
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const medianOf = (mode: Mode, pick: (r: (typeof rows)[number]) => number) => {
  const xs = rows.filter((r) => r.mode === mode).map(pick)
  return xs.length > 0 ? median(xs) : Number.NaN
}
const rps = (mode: Mode) => medianOf(mode, (r) => r.requestsPerSecond)
const p99 = (mode: Mode) => medianOf(mode, (r) => r.latencyMs.p99)
const ratio = (a: number, b: number) => +(a / b).toFixed(2)
const result = {
  runAt: new Date().toISOString(),
  connections: Number(values.connections),
  durationS: Number(values.duration),
  warmupS: Number(values.warmup),
  serviceOverrides: overrides,
  rows,
  medianRequestsPerSecond: {
    bare: rps('bare'),
    catalog: rps('catalog'),
    uncached: rps('uncached'),
    cached: rps('cached'),
  },
  ratios: {
    cachedOverBare: ratio(rps('cached'), rps('bare')),
    cachedOverUncached: ratio(rps('cached'), rps('uncached')),
    cachedP99OverBareP99: ratio(p99('cached'), p99('bare')),
    // NaN without a catalog run
    cachedOverCatalog: ratio(rps('cached'), rps('catalog')),
    cachedP99OverCatalogP99: ratio(p99('cached'), p99('catalog')),
  },
}
mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
const file = values.label ? `cache_http-${values.label}.json` : 'cache_http.json'
writeFileSync(new URL(`../results/${file}`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
const extra = Object.keys(overrides).length > 0 ? `, service overrides ${JSON.stringify(overrides)}` : ''
console.log(
  `\n### GET /videos/:id, Zipf(1) over the seeded catalog, ${values.connections} connections, ${values.duration} s${extra}\n`,
)
console.log(
  '| mode | requests/s | p50 ms | p99 ms | non-2xx | service CPU ms / request | Redis round trips / request | Redis commands / request | DB queries / request |',
)
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for (const r of rows) {
  const redisCells = isBare(r.mode)
    ? '– | –'
    : `${r.redisRoundTripsPerRequest} | ${r.redisCommandsPerRequest}`
  console.log(
    `| ${r.mode} | ${r.requestsPerSecond} | ${r.latencyMs.p50} | ${r.latencyMs.p99} | ${r.non2xx} | ${r.cpuMsPerRequest} | ${redisCells} | ${r.dbQueriesPerRequest} |`,
  )
}
console.log(
  `\nmedians: cached ÷ bare ${result.ratios.cachedOverBare}, cached ÷ uncached ${result.ratios.cachedOverUncached}, cached p99 ÷ bare p99 ${result.ratios.cachedP99OverBareP99}`,
)
if (catalog)
  console.log(
    `catalog (bare Fastify, every video's text in a Map): cached ÷ catalog ${result.ratios.cachedOverCatalog}, p99 ${result.ratios.cachedP99OverCatalogP99}`,
  )
for (const r of rows.filter((r) => !isBare(r.mode))) {
  console.log(`${r.mode} Redis commands / request: ${JSON.stringify(r.redisCommandsPerRequestByName)}`)
  if (r.mode === 'cached')
    console.log(`cache outcomes (warm-up + run): ${JSON.stringify(r.cacheOutcomesIncludingWarmup)}`)
}
process.exit(0)
