/**
 * The flood scenarios, side by side in three modes (no cache, older design, floodgate), as one
 * report with charts: `npm run bench` (full: 100k videos, 4 instances per mode) or
 * `npm run bench -- --quick` (5k videos, 2 instances, seconds per phase: the CI smoke run).
 *
 *   node --conditions=floodgate-source --import tsx bench/scenarios/run.ts [--quick] [--out DIR]
 *        [--only hot-key-expiry,penetration,abusive-client,avalanche,like-storm,viral,burst]
 *
 * Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust) and `redis-server` on the PATH (each
 * mode gets a private one). Writes DIR/REPORT.md, DIR/scenarios/<id>.svg and .json (full run:
 * bench/results; --quick: a temporary folder unless --out). Exits 1 if an invariant fails
 * (DB rows == Redis state after the like storm and the viral video, no 5xx, admitted ≤ limit, DB statements of a burst,
 * no floodgate read as long as a read-path wait bound: see tail.ts).
 */
import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { spawnTs } from '../support/spawn_ts.js'
import { abusiveClient } from './abusive_client.js'
import { avalanche } from './avalanche.js'
import { burst } from './burst.js'
import { type Context, FULL, QUICK } from './context.js'
import { hotKeyExpiry } from './hot_key_expiry.js'
import { likeStorm } from './like_storm.js'
import { MODES, ModeDeployment, type ModeName, pgUrl } from './modes.js'
import { penetration } from './penetration.js'
import { killAll, reaperDone, startReaper, track } from './processes.js'
import { writeReport } from './report.js'
import type { Scenario, ScenarioResult } from './scenario.js'
import { viral } from './viral.js'

// grouped by profile: switching one restarts every instance
const SCENARIOS: Scenario[] = [hotKeyExpiry, penetration, abusiveClient, avalanche, likeStorm, viral, burst]
const repo = fileURLToPath(new URL('../../', import.meta.url))
const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    only: { type: 'string' },
  },
})
const params = values.quick ? QUICK : FULL
const outDir =
  values.out ?? (values.quick ? mkdtempSync(join(tmpdir(), 'floodgate-bench-')) : join(repo, 'bench/results'))
const logDir = mkdtempSync(join(tmpdir(), 'floodgate-bench-logs-'))
const selected = values.only ? SCENARIOS.filter((s) => values.only!.split(',').includes(s.id)) : SCENARIOS
const started = performance.now()
const log = (message: string) =>
  process.stdout.write(`[${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${message}\n`)

const base = `fgbench_${randomBytes(4).toString('hex')}`
const databaseOf = (mode: ModeName | 'seed') => `${base}_${mode}`
const admin = new pg.Client({ connectionString: pgUrl('postgres') })
const deployments: Partial<Record<ModeName, ModeDeployment>> = {}
let cleaning: Promise<void> | undefined

async function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await Promise.all(Object.values(deployments).map((d) => d.stop().catch(() => {})))
    killAll()
    for (const name of [...MODES, 'seed' as const].map(databaseOf))
      await admin.query(`drop database if exists ${name} with (force)`).catch(() => {})
    await admin.end().catch(() => {})
    reaperDone()
  })()
  return cleaning
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping everything the bench started`)
    void cleanup().finally(() => process.exit(130))
  })
}

function seed(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawnTs(
        join(repo, 'apps/video-api/src/cli/seed.ts'),
        ['--users', String(params.users), '--videos', String(params.videos)],
        {
          cwd: repo,
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, DATABASE_URL: pgUrl(databaseOf('seed')) },
        },
      ),
    )
    child.stdout?.on('data', (chunk: Buffer) => log(chunk.toString().trim()))
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`seed exited with ${code}`))))
  })
}

let failed = false
startReaper(join(logDir, 'reaper.json'), pgUrl('postgres'), [...MODES, 'seed' as const].map(databaseOf))
try {
  await admin.connect()
  log(
    `${values.quick ? 'quick' : 'full'} run: ${params.videos} videos, ${params.instances} instances per mode, out ${outDir}`,
  )
  await admin.query(`create database ${databaseOf('seed')}`)
  await seed()
  const db = new pg.Client({ connectionString: pgUrl(databaseOf('seed')) })
  await db.connect()
  const ids = await db.query<{ id: string }>(`
    select v.id::text as id from video_popularity p join videos v on v.id = p.video_id
    where v.deleted_at is null and v.status = 'published' and v.visibility = 'public' order by p.rank`)
  const maxId = await db.query<{ id: string }>('select coalesce(max(id), 0)::text as id from videos')
  const users = await db.query<{ id: string }>('select id::text as id from users order by id')
  const audience = await db
    .query<{ id: string }>('select installation_id as id from service_meta limit 1')
    .then((r) => r.rows[0]?.id)
    .catch(() => undefined)
  await db.end()
  for (const mode of MODES)
    await admin.query(`create database ${databaseOf(mode)} template ${databaseOf('seed')}`)
  const jwtSecret = randomBytes(32).toString('hex')
  log('starting the three deployments')
  await Promise.all(
    MODES.map(async (mode) => {
      deployments[mode] = await ModeDeployment.start({
        mode,
        profile: selected[0]?.profile ?? 'bench',
        database: databaseOf(mode),
        instances: params.instances,
        ttlMs: params.ttlMs,
        jwtSecret,
        logDir,
      })
    }),
  )
  await deployments.floodgate!.ensureBloom(log)
  log(`deployments up (logs in ${logDir})`)
  const ctx: Context = {
    params,
    deployments: deployments as Record<ModeName, ModeDeployment>,
    idsByRank: ids.rows.map((r) => r.id),
    missingIdFloor: BigInt(maxId.rows[0]!.id) + 1_000_000n,
    userIds: users.rows.map((r) => r.id),
    jwtSecret,
    audience,
    admin,
    databaseOf,
    log,
  }
  const version = (await admin.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!
    .v
  const env = {
    date: new Date().toISOString(),
    command: `npm run bench${values.quick ? ' -- --quick' : ''}`,
    node: process.version,
    redis: /v=(\S+)/.exec(execFileSync('redis-server', ['--version']).toString())?.[1] ?? 'unknown',
    postgres: version,
    cpu: `${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}`,
    loadAverage: loadavg()
      .map((n) => n.toFixed(2))
      .join(' '),
    params,
    notes:
      deployments.floodgate!.bloomRestarts > 0
        ? `floodgate's instances were restarted ${deployments.floodgate!.bloomRestarts} time(s) before the scenarios: their Bloom rebuild at start failed (Redis command timeout on the loaded machine) and video-api does not retry it`
        : undefined,
  }
  const results: ScenarioResult[] = []
  for (const scenario of selected) {
    const result = await scenario.run(ctx)
    results.push(result)
    for (const i of result.invariants)
      log(`  ${i.ok ? 'ok  ' : 'FAIL'} ${result.title}: ${i.name} (${i.detail})`)
  }
  const file = writeReport(
    outDir,
    { ...env, elapsedS: Math.round((performance.now() - started) / 1000) },
    results,
  )
  log(`report: ${file}`)
  process.stdout.write(`\n${readFileSync(file, 'utf8').split('\n## ')[1] ?? ''}\n`)
  failed = results.some((r) => r.invariants.some((i) => !i.ok))
} catch (error) {
  log(`bench failed: ${(error as Error).stack ?? error}`)
  failed = true
} finally {
  await cleanup()
}
log(failed ? 'an invariant failed or the bench broke: exit 1' : 'all invariants hold')
process.exit(failed ? 1 : 0)
