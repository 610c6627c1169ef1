// GET /videos/:id on the real service, uncached (CACHE_ENABLED=false) vs cached,
// side by side in one run: requests/s (autocannon, through bench/http/get-video.ts,
// Zipf(1) over the seeded popularity) and database transactions per request
// (pg_stat_database.xact_commit of the bench database; every read is one statement).
//   node --conditions=floodgate-source --import tsx bench/cache/http.ts --db postgres://postgres@127.0.0.1:5432/va_bench_cache
// The database must be seeded first (npm run seed -w video-api -- --users 2000 --videos 100000).
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import pg from 'pg'

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/va_bench_cache' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    duration: { type: 'string', default: '15' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string', default: '10' },
    label: { type: 'string', default: '' },
  },
})
const root = fileURLToPath(new URL('../../', import.meta.url))

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

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

async function measure(mode: 'uncached' | 'cached') {
  const port = await freePort()
  const prefix = `vabench-${mode}-${randomBytes(3).toString('hex')}`
  const service = spawn(
    process.execPath,
    ['--conditions=floodgate-source', '--import', 'tsx', 'apps/video-api/src/main.ts'],
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
    cacheOutcomesIncludingWarmup: cacheOutcomes,
  }
}

const rows = [await measure('uncached'), await measure('cached')]
const [base, cached] = rows as [(typeof rows)[number], (typeof rows)[number]]
const result = {
  runAt: new Date().toISOString(),
  env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('CACHE_'))),
  rows,
  speedup: +(cached.requestsPerSecond / base.requestsPerSecond).toFixed(2),
}
mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
const file = values.label ? `cache_http-${values.label}.json` : 'cache_http.json'
writeFileSync(new URL(`../results/${file}`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
console.log(
  `\n### GET /videos/:id, Zipf(1) over the seeded catalog, ${values.connections} connections, ${values.duration} s\n`,
)
console.log('| mode | requests/s | p50 ms | p99 ms | non-2xx | DB queries / request |')
console.log('| --- | --- | --- | --- | --- | --- |')
for (const r of rows) {
  const latency = r.latencyMs as { p50: number; p99: number }
  console.log(
    `| ${r.mode} | ${r.requestsPerSecond} | ${latency.p50} | ${latency.p99} | ${r.non2xx} | ${r.dbQueriesPerRequest} |`,
  )
}
console.log(`\ncached ÷ uncached requests/s: ${result.speedup}`)
console.log(`cache outcomes (warm-up + run): ${JSON.stringify(cached.cacheOutcomesIncludingWarmup)}`)
process.exit(0)
