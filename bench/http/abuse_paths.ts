// Service CPU per request of the abusive-client scenario's three request kinds, per cache mode, one
// video-api process each (main.ts, the flood scenarios' `bench` rate-limit quotas, TRUST_PROXY=true):
// `ip429` an address over its quota, `user429` a bearer token over its quota (both answered 429 from
// the blocked cache), `read` Zipf reads of published videos from 256 addresses, as the scenario's normal users.
// Interleaved rounds; CPU = utime + stime of the service process (/proc/<pid>/stat).
//
//   npm run bench:abuse
//   env: BENCH_DB (postgres://postgres@127.0.0.1:5432/abuse_paths, seeded here when empty),
//   BENCH_MODES (none,floodgate; `floodgate@/path/to/checkout` runs that checkout's service), BENCH_KINDS (ip429,user429,read), BENCH_ROUNDS (3),
//   BENCH_DURATION_S (3 per kind and round), BENCH_CONNECTIONS (16), BENCH_CPU_PROFILE_DIR (none)
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { freePort, PrivateRedis } from '@floodgate/test-support'
import pg from 'pg'
import { bearer } from '../scenarios/context.js'
import { videoApiReady, waitUntil } from '../support/http_service.js'
import { popularIds } from '../support/popular_ids.js'
import { processCpuMs } from '../support/process_cpu.js'
import { TS_NODE_FLAGS } from '../support/spawn_ts.js'
import { zipfSampler } from '../support/zipf.js'

type Result = { requests: { total: number }; statusCodeStats: Record<string, { count: number }> }
type RawRequest = { method?: string; path?: string; headers?: Record<string, string> }
const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: Record<string, unknown>,
  done: (error: Error | null, result: Result) => void,
) => unknown

const repo = fileURLToPath(new URL('../../', import.meta.url))
const dbUrl = process.env.BENCH_DB ?? 'postgres://postgres@127.0.0.1:5432/abuse_paths'
const modes = (process.env.BENCH_MODES ?? 'none,floodgate').split(',')
const kinds = (process.env.BENCH_KINDS ?? 'ip429,user429,read').split(',')
const rounds = Number(process.env.BENCH_ROUNDS ?? 3)
const durationS = Number(process.env.BENCH_DURATION_S ?? 3)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16)
const profileDir = process.env.BENCH_CPU_PROFILE_DIR
const secret = 'abuse-paths-secret-abuse-paths-secret-0123'

async function seeded(): Promise<{ ids: string[]; user: string; audience: string }> {
  const admin = new pg.Client({ connectionString: dbUrl.replace(/\/[^/]+$/, '/postgres') })
  await admin.connect()
  const name = new URL(dbUrl).pathname.slice(1)
  const exists = await admin.query('select 1 from pg_database where datname = $1', [name])
  if (exists.rowCount === 0) await admin.query(`create database ${name}`)
  await admin.end()
  const db = new pg.Client({ connectionString: dbUrl })
  await db.connect()
  const has = await db
    .query('select count(*)::int as n from videos')
    .then((r) => r.rows[0].n as number)
    .catch(() => 0)
  if (has === 0)
    execFileSync(
      process.execPath,
      [
        '--conditions=floodgate-source',
        '--import',
        'tsx',
        'apps/video-api/src/cli/seed.ts',
        '--users',
        '2000',
        '--videos',
        '100000',
      ],
      { cwd: repo, env: { ...process.env, DATABASE_URL: dbUrl }, stdio: 'inherit' },
    )
  const user = await db.query<{ id: string }>('select max(id)::text as id from users')
  const audience = await db.query<{ id: string }>('select installation_id as id from service_meta limit 1')
  await db.end()
  return { ids: await popularIds(dbUrl), user: user.rows[0]!.id, audience: audience.rows[0]!.id }
}

/** `mode` is a CACHE_MODE, optionally `@<checkout>` to run another checkout's service (a baseline). */
async function start(mode: string, redis: string): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort()
  const [cacheMode, checkout] = mode.split('@') as [string, string | undefined]
  const root = checkout ? `${checkout.replace(/\/$/, '')}/` : repo
  const dir = `${profileDir}/${mode.replace(/[@/]+/g, '_')}`
  const args = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : []
  const child = spawn(process.execPath, [...TS_NODE_FLAGS, ...args, `${root}apps/video-api/src/main.ts`], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: dbUrl,
      REDIS_URL: redis,
      REDIS_PREFIX: 'va',
      JWT_SECRET: secret,
      SEED_ON_EMPTY: 'false',
      LOG_LEVEL: 'warn',
      CACHE_MODE: cacheMode,
      TRUST_PROXY: 'true',
      // the flood scenarios' `bench` profile (bench/scenarios/modes.ts)
      DB_POOL_MAX: '5',
      CACHE_TTL_MIN_MS: '20000',
      CACHE_TTL_MAX_MS: '40000',
      RATE_LIMIT_USER_LIMIT: '300',
      RATE_LIMIT_USER_WINDOW_MS: '10000',
      RATE_LIMIT_ANONYMOUS_LIMIT: '300',
      RATE_LIMIT_ANONYMOUS_WINDOW_MS: '10000',
    },
  })
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`video-api (${mode}) exited with ${code}`))),
  )
  const base = `http://127.0.0.1:${port}`
  // without a cache there is no Bloom replica to wait for
  const ready =
    cacheMode === 'none'
      ? waitUntil(`${base}/readyz`, (status) => status === 200, `video-api (${mode})`)
      : videoApiReady(base, `video-api (${mode})`)
  await Promise.race([ready, exited])
  return { child, port }
}

const { ids, user, audience } = await seeded()
const rank = zipfSampler(ids.length)
const token = `Bearer ${bearer({ jwtSecret: secret, audience }, user)}`
const headersOf: Record<string, () => Record<string, string>> = {
  ip429: () => ({ 'x-forwarded-for': '192.0.2.66' }),
  user429: () => ({ authorization: token }),
  // the scenario's normal users: 256 addresses (bench/scenarios/context.ts randomIp)
  read: () => ({ 'x-forwarded-for': `10.0.0.${(Math.random() * 256) | 0}` }),
}
const hit = (port: number, kind: string, seconds: number) =>
  new Promise<Result>((resolve, reject) =>
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections,
        duration: seconds,
        requests: [
          {
            setupRequest: (req: RawRequest) => {
              req.method = 'GET'
              req.path = `/videos/${ids[rank()]}`
              req.headers = headersOf[kind]!()
              return req
            },
          },
        ],
      },
      (error, r) => (error ? reject(error) : resolve(r)),
    ),
  )

const redises: PrivateRedis[] = []
const servers: Record<string, { child: ChildProcess; port: number }> = {}
const totals: Record<string, { requests: number; cpuMs: number; codes: Record<string, number> }> = {}
try {
  for (const mode of modes) {
    const redis = await PrivateRedis.start()
    redises.push(redis)
    servers[mode] = await start(mode, redis.url)
  }
  // warm-up: JIT, the cache's hot set, and both abusers over their quota
  for (const mode of modes) for (const kind of kinds) await hit(servers[mode]!.port, kind, 2)
  for (let round = 0; round < rounds; round++)
    for (const kind of kinds)
      for (const mode of modes) {
        const { child, port } = servers[mode]!
        const before = processCpuMs(child.pid!)
        const r = await hit(port, kind, durationS)
        const name = `${mode} ${kind}`
        totals[name] ??= { requests: 0, cpuMs: 0, codes: {} }
        const t = totals[name]
        t.cpuMs += processCpuMs(child.pid!) - before
        t.requests += r.requests.total
        for (const [code, s] of Object.entries(r.statusCodeStats))
          t.codes[code] = (t.codes[code] ?? 0) + s.count
      }
} finally {
  for (const { child } of Object.values(servers)) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  for (const r of redises) await r.kill()
}
process.stdout.write(
  '| mode | kind | requests | service CPU µs/request | status codes |\n|---|---|---:|---:|---|\n',
)
for (const [name, t] of Object.entries(totals)) {
  const [mode, kind] = name.split(' ')
  const codes = Object.entries(t.codes)
    .map(([c, n]) => `${c}: ${n}`)
    .join(', ')
  process.stdout.write(
    `| ${mode} | ${kind} | ${t.requests} | ${Math.round((t.cpuMs * 1000) / t.requests)} | ${codes} |\n`,
  )
}
