// Two cached video-api services side by side, measured in alternating slices: for a change too
// small to show between whole runs on a shared box (CPU per request drifts by more than the change
// between runs minutes apart). Both run all the time, each on its own redis-server, the same
// database; each slice loads one of them (closed loop, Zipf(1), bench/http/get-video.ts) and reads
// its CPU from /proc; the order flips every slice (A B, B A, …) so neither gains from going first.
//   npm run bench:ab -- --db postgres://postgres@127.0.0.1:5432/va_bench_http --b-env LOG_LEVEL=warn
//   npm run bench:ab -- --db … --a-root /tmp/before   (a checkout of the code before, after its own npm ci)
// A side is a checkout (`--a-root`/`--b-root`, default this one) plus environment overrides
// (`--a-env`/`--b-env` K=V,…). On top of the service's defaults both get what bench:cache:http
// gives the cached mode, for the same reasons: their own Redis and the database, a JWT secret, and
// RATE_LIMIT_ANONYMOUS_LIMIT=1000000 (all load comes from one address; the default 300 a minute
// would answer 429s). Before the slices: every id once, then `--warmup` s of load on each.
// Prints per slice CPU µs per request and requests/s of each side, and the median of B ÷ A.
import { type ChildProcess, spawn } from 'node:child_process'
import { realpathSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { freePort, PrivateRedis } from '@floodgate/test-support'
import { envOverrides, sweep, videoApiReady, zipfLoad } from '../support/http_service.js'
import { popularIds } from '../support/popular_ids.js'
import { processCpuMs } from '../support/process_cpu.js'
import { TS_NODE_FLAGS } from '../support/spawn_ts.js'

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/va_bench_http' },
    'a-root': { type: 'string', default: '' },
    'b-root': { type: 'string', default: '' },
    'a-env': { type: 'string', default: '' },
    'b-env': { type: 'string', default: '' },
    // slices per side, and each slice's length (s)
    slices: { type: 'string', default: '8' },
    slice: { type: 'string', default: '6' },
    warmup: { type: 'string', default: '15' },
    connections: { type: 'string', default: '32' },
  },
})
const here = fileURLToPath(new URL('../../', import.meta.url))
const connections = Number(values.connections)

interface Side {
  name: 'A' | 'B'
  root: string
  env: Record<string, string>
  base: string
  child: ChildProcess
  redis: PrivateRedis
}

/**
 * @throws {Error} when `root`'s `floodgate` package is not its own: a checkout whose node_modules is
 * a link to another's would run that checkout's library under its own service.
 */
function checkOwnLibrary(name: Side['name'], root: string): void {
  const library = realpathSync(join(root, 'node_modules', 'floodgate'))
  if (library !== realpathSync(join(root, 'packages', 'floodgate')))
    throw new Error(`side ${name}: ${root}'s floodgate resolves to ${library}; run npm ci in ${root}`)
}

async function start(name: Side['name'], root: string, env: Record<string, string>): Promise<Side> {
  checkOwnLibrary(name, root)
  const redis = await PrivateRedis.start()
  const port = await freePort()
  // the log goes to /dev/null: a pipe read by this process would cost this process CPU
  const child = spawn(process.execPath, [...TS_NODE_FLAGS, 'apps/video-api/src/main.ts'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: values.db,
      REDIS_URL: redis.url,
      CACHE_ENABLED: 'true',
      RATE_LIMIT_ANONYMOUS_LIMIT: '1000000',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  process.once('exit', () => child.kill('SIGKILL'))
  const base = `http://127.0.0.1:${port}`
  await videoApiReady(base, `side ${name}`)
  return { name, root, env, base, child, redis }
}

/** One slice of load on `side`: its CPU µs per request and requests/s. */
async function slice(side: Side): Promise<{ cpuUsPerRequest: number; requestsPerSecond: number }> {
  const pid = side.child.pid!
  const before = processCpuMs(pid)
  const load = await zipfLoad({
    base: side.base,
    db: values.db!,
    durationS: Number(values.slice),
    connections,
  })
  const cpuMs = processCpuMs(pid) - before
  return {
    cpuUsPerRequest: +((cpuMs * 1000) / load.totalRequests).toFixed(1),
    requestsPerSecond: Math.round(load.requestsPerSecond),
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

const a = await start('A', resolve(values['a-root'] || here), envOverrides(values['a-env']!))
const b = await start('B', resolve(values['b-root'] || here), envOverrides(values['b-env']!))
try {
  const ids = await popularIds(values.db!)
  for (const side of [a, b]) {
    await sweep(side.base, ids, connections)
    await zipfLoad({ base: side.base, db: values.db!, durationS: Number(values.warmup), connections })
  }
  const rows: {
    slice: number
    A: Awaited<ReturnType<typeof slice>>
    B: Awaited<ReturnType<typeof slice>>
  }[] = []
  for (let i = 0; i < Number(values.slices); i++) {
    const order = i % 2 === 0 ? [a, b] : [b, a]
    const measured: Partial<Record<Side['name'], Awaited<ReturnType<typeof slice>>>> = {}
    for (const side of order) measured[side.name] = await slice(side)
    const row = { slice: i + 1, A: measured.A!, B: measured.B! }
    rows.push(row)
    console.error(
      `slice ${row.slice}: A ${row.A.cpuUsPerRequest} µs/req ${row.A.requestsPerSecond} req/s · B ${row.B.cpuUsPerRequest} µs/req ${row.B.requestsPerSecond} req/s`,
    )
  }
  const ratio = (pick: (r: (typeof rows)[number]['A']) => number) =>
    +median(rows.map((r) => pick(r.B) / pick(r.A))).toFixed(3)
  const result = {
    runAt: new Date().toISOString(),
    A: { root: a.root, env: a.env },
    B: { root: b.root, env: b.env },
    sliceS: Number(values.slice),
    connections,
    rows,
    medianBOverA: {
      cpuPerRequest: ratio((r) => r.cpuUsPerRequest),
      requestsPerSecond: ratio((r) => r.requestsPerSecond),
    },
    slicesWhereBUsedLessCpu: rows.filter((r) => r.B.cpuUsPerRequest < r.A.cpuUsPerRequest).length,
  }
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
} finally {
  for (const side of [a, b]) {
    side.child.kill('SIGTERM')
    await side.redis.destroy()
  }
}
