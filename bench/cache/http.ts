// GET /videos/:id on the real service, uncached (CACHE_ENABLED=false) vs cached,
// side by side in one run: requests/s (autocannon, through bench/http/get-video.ts,
// Zipf(1) over the seeded popularity) and database transactions per request
// (pg_stat_database.xact_commit of the bench database; every read is one statement).
//   node --conditions=floodgate-source --import tsx bench/cache/http.ts --db postgres://postgres@127.0.0.1:5432/va_bench_cache
// The database must be seeded first (npm run seed -w video-api -- --users 2000 --videos 100000).
// Interleaved rounds on a shared box, medians reported:
//   ... bench/cache/http.ts --modes uncached,cached,uncached,cached [--warmup 10] [--label name]
// Also: Redis commands per request (MONITOR probe after each run, --probe requests),
// --cpu-prof <dir> to profile the service (one .cpuprofile per thread under <dir>/<mode>).
// Every run starts on an empty cache (fresh key prefix); get-video.ts replays one seeded id
// sequence, so a warm-up at least as long as the run makes the run a steady state (all ids seen).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'

import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { freePort } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import pg from 'pg'
import { seededRandom, zipfSampler } from '../support/zipf.js'

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/va_bench_cache' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '10' },
    label: { type: 'string', default: '' },
    // comma-separated modes to run, in order (e.g. uncached,cached,uncached,cached for interleaved rounds)
    modes: { type: 'string', default: 'uncached,cached' },
    // requests of the Redis-commands-per-request probe (after the measured run, under MONITOR)
    probe: { type: 'string', default: '1000' },
    // directory for the service's --cpu-prof profiles (none when empty)
    'cpu-prof': { type: 'string', default: '' },
  },
})
const root = fileURLToPath(new URL('../../', import.meta.url))

async function transactions(): Promise<number> {
  const client = new pg.Client({ connectionString: values.db })
  await client.connect()
  const { rows } = await client.query<{ n: string }>(
    'select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()',
  )
  await client.end()
  return Number(rows[0]?.n ?? 0)
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} exited ${code}`))))
  })
}

/** Ids of the benchmark's population, in popularity order (as bench/http/get-video.ts reads them). */
async function popularIds(): Promise<string[]> {
  const client = new pg.Client({ connectionString: values.db })
  await client.connect()
  const { rows } = await client.query<{ id: string }>(`
    select v.id::text as id from video_popularity p join videos v on v.id = p.video_id
    where v.deleted_at is null and v.status = 'published' and v.visibility = 'public'
    order by p.rank`)
  await client.end()
  return rows.map((r) => r.id)
}

/**
 * Redis commands per request after the measured run: MONITOR on the shared Redis, counting the
 * commands that name the service's key prefix (cache, Bloom and counts keys, channels), while
 * `--probe` requests (Zipf(1), 10 at a time, another seed than the load) hit the service.
 */
async function countRedisCommands(port: number, prefix: string): Promise<number> {
  const ids = await popularIds()
  const rank = zipfSampler(ids.length, 1, seededRandom(777))
  const pick = () => ids[rank()]!
  const monitorClient = new Redis(values.redis!)
  const monitor = await monitorClient.monitor()
  let commands = 0
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args.some((a) => a.includes(prefix))) commands++
  })
  await sleep(200)
  const n = Number(values.probe)
  let next = 0
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < n) {
        next++
        await fetch(`http://127.0.0.1:${port}/videos/${pick()}`).then((r) => r.arrayBuffer())
      }
    }),
  )
  await sleep(300)
  monitor.disconnect()
  monitorClient.disconnect()
  return +(commands / n).toFixed(3)
}

async function measure(mode: 'uncached' | 'cached') {
  const port = await freePort()
  const prefix = `vabench-${mode}-${randomBytes(3).toString('hex')}`
  const service = spawn(
    process.execPath,
    [
      // one profile per thread (tsx's loader runs in a worker); named by Node (pid, thread id)
      ...(values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}/${mode}`] : []),
      '--conditions=floodgate-source',
      '--import',
      'tsx',
      'apps/video-api/src/main.ts',
    ],
    {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: values.db,
        REDIS_URL: values.redis,
        REDIS_PREFIX: prefix,
        CACHE_ENABLED: mode === 'cached' ? 'true' : 'false',
        RATE_LIMIT_ENABLED: 'false',
        SEED_ON_EMPTY: 'false',
        LOG_LEVEL: 'info',
        JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let log = ''
  const collect = (chunk: Buffer) => {
    log += chunk.toString()
  }
  service.stdout.on('data', collect)
  service.stderr.on('data', collect)
  process.once('exit', () => service.kill('SIGKILL'))
  const deadline = Date.now() + 60_000
  // cached: also wait for the Bloom filter (rebuilt from the database at start)
  const ready = () =>
    log.includes('Server listening') &&
    (mode === 'uncached' || log.includes('bloom filter rebuilt') || log.includes('rebuild running elsewhere'))
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`service (${mode}) did not start:\n${log}`)
    await sleep(200)
  }
  console.error(`service ready (${mode})`)
  const load = (durationS: string) =>
    run(process.execPath, [
      '--import',
      'tsx',
      'bench/http/get-video.ts',
      '--url',
      `http://127.0.0.1:${port}`,
      '--db',
      values.db!,
      '--duration',
      durationS,
      '--connections',
      values.connections!,
    ])
  await load(values.warmup!) // not measured: fills the caches (and PostgreSQL's buffers for the baseline)
  await sleep(1500)
  const before = await transactions()
  const out = await load(values.duration!)
  console.error(`load done (${mode})`)
  await sleep(1500) // statistics are flushed by backends within about a second
  const after = await transactions()
  const redisCommandsPerRequest = await countRedisCommands(port, prefix)
  const metrics = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text())
  const cacheOutcomes = Object.fromEntries(
    [...metrics.matchAll(/floodgate_cache_events_total\{cache="video",outcome="(\w+)"\} (\d+)/g)]
      .filter((m) => m[2] !== '0')
      .map((m) => [m[1], Number(m[2])]),
  )
  const summary = JSON.parse(out) as {
    totalRequests: number
    requestsPerSecond: number
    latencyMs: unknown
    non2xx: number
  }
  service.kill('SIGTERM')
  await new Promise((resolve) => service.once('exit', resolve))
  const redis = new Redis(values.redis!)
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 5000)
    cursor = next
    if (keys.length > 0) await redis.unlink(...keys)
  } while (cursor !== '0')
  redis.disconnect()
  // the popularity query of get-video.ts is one transaction, subtracted here
  const dbTransactions = after - before - 1
  return {
    mode,
    ...summary,
    dbTransactions,
    dbQueriesPerRequest: +(dbTransactions / summary.totalRequests).toFixed(4),
    redisCommandsPerRequest,
    cacheOutcomesIncludingWarmup: cacheOutcomes,
  }
}

const modes = values.modes!.split(',').map((m) => m.trim())
const rows: Awaited<ReturnType<typeof measure>>[] = []
for (const mode of modes) {
  if (mode !== 'uncached' && mode !== 'cached') throw new Error(`unknown mode ${mode}`)
  rows.push(await measure(mode))
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}
const medianRps = (mode: string) =>
  median(rows.filter((r) => r.mode === mode).map((r) => r.requestsPerSecond))
const result = {
  runAt: new Date().toISOString(),
  env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('CACHE_'))),
  rows,
  medianRequestsPerSecond: { uncached: medianRps('uncached'), cached: medianRps('cached') },
  speedup: +(medianRps('cached') / medianRps('uncached')).toFixed(2),
}
mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
const file = values.label ? `cache_http-${values.label}.json` : 'cache_http.json'
writeFileSync(new URL(`../results/${file}`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
console.log(
  `\n### GET /videos/:id, Zipf(1) over the seeded catalog, ${values.connections} connections, ${values.duration} s\n`,
)
console.log(
  '| mode | requests/s | p50 ms | p99 ms | non-2xx | DB queries / request | Redis commands / request |',
)
console.log('| --- | --- | --- | --- | --- | --- | --- |')
for (const r of rows) {
  const latency = r.latencyMs as { p50: number; p99: number }
  console.log(
    `| ${r.mode} | ${r.requestsPerSecond} | ${latency.p50} | ${latency.p99} | ${r.non2xx} | ${r.dbQueriesPerRequest} | ${r.redisCommandsPerRequest} |`,
  )
}
console.log(`\ncached ÷ uncached requests/s (medians): ${result.speedup}`)
for (const r of rows.filter((r) => r.mode === 'cached')) {
  console.log(`cache outcomes (warm-up + run): ${JSON.stringify(r.cacheOutcomesIncludingWarmup)}`)
}
process.exit(0)
