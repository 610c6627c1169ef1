// How long the Bloom and counts rebuilds hold this process's event loop (issue 30: the avalanche's
// worst seconds follow Redis coming back empty). Seeds the bench's catalog once into a kept schema
// (100,000 videos, 2,000 users, seed 42: what `npm run bench` seeds), wires both rebuilds the way
// video-api does with the service's defaults, and runs each while monitorEventLoopDelay watches.
//   node --conditions=floodgate-source --import tsx bench/rebuild/loop_delay.ts [--runs 3] [--likes N] [--only bloom|counts]
// --likes N: N like rows, N favourite rows and N played videos (the bench's catalog has none, so
// its counts rebuild reads empty tables). Needs the local PostgreSQL (FLOODGATE_TEST_DATABASE_URL, default
// database `test`) and Redis (REDIS_URL); the Redis keys go under a fresh prefix, deleted at exit.
import { randomBytes } from 'node:crypto'
import { loadavg } from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { deleteByPrefix, TEST_DATABASE_URL } from '@floodgate/test-support'
import { BloomFilter, BloomLifecycle, BloomReplica, CountsRecovery } from 'floodgate'
import { Redis } from 'ioredis'
import { sql } from 'kysely'
import { liveVideoIds } from '../../apps/video-api/src/cache/video_ids.js'
import { fields } from '../../apps/video-api/src/config/fields.js'
import { COUNTERS_SETTINGS_DEFAULTS } from '../../apps/video-api/src/counters/service.js'
import { openPostgres } from '../../apps/video-api/src/db/connect.js'
import { migrateToLatest } from '../../apps/video-api/src/db/migrate.js'
import { SEED_ANCHOR_MS } from '../../apps/video-api/src/db/prepare.js'
import { kyselySqlDatabase } from '../../apps/video-api/src/interactions/sql_database.js'
import { videoInteractionTables } from '../../apps/video-api/src/interactions/tables.js'
import { maintenanceClient } from '../../apps/video-api/src/redis/maintenance_client.js'
import { seedCatalog } from '../../apps/video-api/src/seed/insert.js'

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    likes: { type: 'string', default: '0' },
    only: { type: 'string' },
  },
})
const runs = Number(values.runs)
const likes = Number(values.likes)
const VIDEOS = 100_000
const USERS = 2_000
const schema = `fgbench_rebuild_${VIDEOS}`
const url = TEST_DATABASE_URL
const database = await openPostgres({ url, schema, poolMax: Number(fields.dbPoolMax.default) })
const db = database.db
await migrateToLatest(db)
const { rows: count } = await sql<{ n: string }>`select count(*)::text as n from videos`.execute(db)
if (count[0]?.n === '0') {
  console.log(`seeding ${VIDEOS} videos into schema ${schema} (kept for the next run)`)
  await seedCatalog(db, { users: USERS, videos: VIDEOS, seed: 42, anchorMs: SEED_ANCHOR_MS })
}
await sql`delete from video_likes`.execute(db)
await sql`delete from video_favorites`.execute(db)
await sql`update videos set like_count = 0, favorite_count = 0, play_count = 0 where play_count <> 0 or like_count <> 0 or favorite_count <> 0`.execute(
  db,
)
if (likes > 0) {
  await sql`insert into video_likes (video_id, user_id)
    select v.id, (select min(id) from users) from videos v where v.deleted_at is null order by v.id limit ${likes}`.execute(
    db,
  )
  await sql`insert into video_favorites (video_id, user_id) select video_id, user_id from video_likes`.execute(
    db,
  )
  await sql`update videos set play_count = 3 where id in (select video_id from video_likes)`.execute(db)
}
const { rows: live } = await sql<{ n: string }>`
  select count(*)::text as n from videos where deleted_at is null`.execute(db)

const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const prefix = `fgbench:rbl:${randomBytes(3).toString('hex')}`
// what video-api gives its rebuilds: its maintenance connection, at the service's default command timeout
const maintenance = maintenanceClient(redis, COUNTERS_SETTINGS_DEFAULTS.recoveryCommandTimeoutMs)
const bloomOptions = {
  prefix,
  name: 'videos',
  bits: Number(fields.bloomBits.default),
  hashes: Number(fields.bloomHashes.default),
}
const filter = new BloomFilter({ redis, ...bloomOptions })
const replica = new BloomReplica({ filter, loadRedis: maintenance })
void replica.start()
const lifecycle = new BloomLifecycle({
  filter,
  rebuilder: new BloomFilter({ redis: maintenance, ...bloomOptions }),
  answers: replica,
  source: () => liveVideoIds(db),
})
const recovery = new CountsRecovery({
  redis: maintenance,
  sql: kyselySqlDatabase(db),
  prefix,
  tables: videoInteractionTables,
})

const histogram = monitorEventLoopDelay({ resolution: 1 })
histogram.enable()
// a 1 ms timer's lateness capped by the CPU time used meanwhile: a stall while a loaded machine
// left this process unscheduled does not count (as in test/bloom/rebuild_loop_delay.test.ts)
let busyMaxMs = 0
let lastTick = performance.now()
let lastCpu = process.cpuUsage()
const busyTimer = setInterval(() => {
  const now = performance.now()
  const used = process.cpuUsage(lastCpu)
  busyMaxMs = Math.max(busyMaxMs, Math.min(now - lastTick - 1, (used.user + used.system) / 1000))
  lastTick = now
  lastCpu = process.cpuUsage()
}, 1)
const ms = (ns: number) => (ns / 1e6).toFixed(1)

/** Runs `fn` with the histogram reset; prints its duration and the loop delay meanwhile. */
async function measured(label: string, fn: () => Promise<unknown>, settle = true): Promise<void> {
  if (settle) await new Promise((resolve) => setTimeout(resolve, 200))
  histogram.reset()
  busyMaxMs = 0
  const started = performance.now()
  const startedUs = process.hrtime.bigint() / 1000n
  await fn()
  const took = performance.now() - started
  // monotonic µs, the clock of a --cpu-prof profile: to pick this span's turns out of it
  if (process.execArgv.includes('--cpu-prof'))
    console.log(`  span µs ${startedUs} ${process.hrtime.bigint() / 1000n}`)
  console.log(
    `${label}: ${took.toFixed(0)} ms; loop delay max ${ms(histogram.max)} ms, p99 ${ms(histogram.percentile(99))} ms, ` +
      `mean ${ms(histogram.mean)} ms (${histogram.count} samples); busy stall max ${busyMaxMs.toFixed(1)} ms`,
  )
}

/** Resolves once the replica has loaded generation `generation` (the reload after a publish). */
async function replicaAt(generation: number): Promise<void> {
  while (replica.position.generation !== generation) await new Promise((resolve) => setTimeout(resolve, 5))
}

console.log(
  `${live[0]?.n} live videos, likes/favourites/plays rows ${likes}; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
)
try {
  for (let run = 1; run <= runs; run++) {
    // the rebuild, then this process's replica loading what it published
    let generation = 0
    if (values.only !== 'counts') {
      await measured(`bloom rebuild ${run}`, async () => {
        generation = (await lifecycle.rebuild()).generation
      })
      await measured(`replica reload ${run}`, () => replicaAt(generation), false)
    }
    if (values.only === 'bloom') continue
    // the counts rebuild after a loss: the epoch marker gone, the merge-mode rebuild
    await redis.del(recovery.keys.epoch())
    await measured(`counts rebuild ${run}`, async () => {
      const outcome = await recovery.rebuild()
      if (!outcome.rebuilt) throw new Error(`counts rebuild: ${outcome.reason}`)
    })
  }
} finally {
  console.log(
    `load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  )
  histogram.disable()
  clearInterval(busyTimer)
  lifecycle.close()
  replica.close()
  await recovery.stop()
  await deleteByPrefix(redis, prefix)
  maintenance.disconnect()
  redis.disconnect()
  await database.close()
}
