/**
 * The interaction flush, PostgreSQL half: how many events per second one consumer applies, the
 * current applier ("new": lock slots, COPY into a staging table, two set-based statements,
 * read-only pending check; "new, unnest": the same without COPY, as on PGlite or Kysely) beside
 * the previous one ("previous": bench/flush/previous, item row locks, four statements through
 * unnest, XCLAIM pending check), in the same run, alternating, on the same events and fresh
 * schemas.
 *
 *   npm run bench:flush [-- --quick] [-- --rounds 3 --events 30000]
 *   npm run bench:flush -- --appliers new,unnest --mixes hot --batches 5000 --no-tail   (one case, to profile)
 *
 * Per run: a fresh schema (video-api's tables from `interactionSchemaSql`, 10,000 videos) and
 * prefix, the library's default partition count (300); the streams filled with EVENTS events in the wire format (XADD pipelined: the write
 * path is not measured here); one consumer started and timed until the group is drained. Mixes:
 * "uniform" (10,000 videos) and "hot" (90 % of the events on video 1); 50 % plays by fresh
 * viewers, 30 % like/unlike and 20 % favourite/unfavourite flips by 100,000 users. Reported per
 * consumer: events/s from start to drained (read + apply + ack), events/s of the handler alone
 * (fence, pending check, SQL), PostgreSQL round trips per batch (BEGIN and COMMIT included, a COPY
 * counts one), the CPU per event of the PostgreSQL backends (from /proc: the server must be local)
 * and of this process (the consumer), and the median over ROUNDS runs. The CPU figures hold on a
 * busy box where the rates do not. Every run checks the counts against the events.
 * "read only" is the same consumer with an empty handler: the ceiling the read and ack allow;
 * "read only, compact" the same through `read-compact-1.lua` (`compactRead`: one string per entry).
 * "new, unnest, in turn" is "new, unnest" with the consumer's read ahead off (`readAhead: false`:
 * read, apply, acknowledge in turn, as before it existed), so the read ahead's gain is a ratio
 * within the run.
 * Then the toggles into Redis (64 in flight) and the steady-load lag with the library's flush.
 *
 * Writes bench/results/flush.json.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { deleteByPrefix, dropSchema } from '@floodgate/test-support'
import {
  createInteractionFlush,
  INTERACTION_DEFAULTS,
  InteractionKeys,
  Interactions,
  interactionSchemaSql,
  pgPoolDatabase,
  type SqlDatabase,
  type SqlExecutor,
  StreamGroupConsumer,
} from 'floodgate'
import { Redis } from 'ioredis'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { videoInteractionTables } from '../../apps/video-api/src/interactions/tables.js'
import { spawnTs } from '../support/spawn_ts.js'
import { createPreviousFlush } from './previous/flush.js'

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    events: { type: 'string' },
    /** Comma-separated subsets, for profiling one case: `--appliers new --mixes hot --batches 5000`. */
    appliers: { type: 'string' },
    mixes: { type: 'string' },
    batches: { type: 'string' },
    'no-tail': { type: 'boolean', default: false },
  },
})
const QUICK = args.quick
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
/** The library's default, as a deployment runs it. */
const PARTITIONS = INTERACTION_DEFAULTS.partitions
/** video-api's schema, which the fresh schema below reproduces. */
const TABLES = videoInteractionTables
const VIDEOS = 10_000
const USERS = 100_000
const EVENTS = Number(args.events ?? (QUICK ? 10_000 : 30_000))
const ROUNDS = Number(args.rounds ?? (QUICK ? 1 : 3))
/** The stream consumer's default (1,000) and the flush's (INTERACTION_DEFAULTS.flushBatchSize, 5,000). */
const BATCH_SIZES = args.batches?.split(',').map(Number) ?? (QUICK ? [1000] : [1000, 5000])
const MIXES = (args.mixes?.split(',') ?? ['uniform', 'hot']) as Mix[]
/** `--appliers previous,new,unnest,in-turn,read-only` (short names: the full ones hold a comma). */
const APPLIERS: Applier[] = (args.appliers?.split(',').map(
  (a) =>
    ({
      unnest: 'new, unnest',
      'in-turn': 'new, unnest, in turn',
      'read-only': 'read only',
      compact: 'read only, compact',
    })[a] ?? a,
) as Applier[]) ?? [
  'previous',
  'new',
  'new, unnest',
  'new, unnest, in turn',
  'read only',
  'read only, compact',
]
const TOGGLES = QUICK ? 5_000 : 30_000
const STEADY_RATE = 5000
const STEADY_SECONDS = QUICK ? 4 : 10
const redis = new Redis(REDIS_URL, { commandTimeout: 20_000 })
const admin = new pg.Client({ connectionString: DATABASE_URL })

type Mix = 'uniform' | 'hot'
type Applier =
  | 'new'
  | 'new, unnest'
  | 'new, unnest, in turn'
  | 'previous'
  | 'read only'
  | 'read only, compact'

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

async function freshSchema(videos: number): Promise<{ schema: string; pool: pg.Pool }> {
  const schema = `bench_flush_${randomBytes(4).toString('hex')}`
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.query(`SET search_path = ${schema}`)
  await admin.query('CREATE TABLE videos (id bigint PRIMARY KEY)')
  await admin.query('INSERT INTO videos SELECT generate_series(1, $1::int)', [videos])
  for (const statement of interactionSchemaSql(TABLES)) await admin.query(statement)
  await admin.query('SET search_path = public')
  const pool = new pg.Pool({
    connectionString: DATABASE_URL,
    max: 4,
    options: `-c search_path=${schema}`,
    application_name: schema,
    // keep every backend to the end of the run, so backendCpuMs sees all the CPU they used
    idleTimeoutMillis: 0,
  })
  return { schema, pool }
}

async function dropFreshSchema(schema: string, pool: pg.Pool): Promise<void> {
  await pool.end()
  await dropSchema(schema, DATABASE_URL)
}

/** mulberry32: a seeded generator, so every run of a mix gets the same events. */
function seeded(seed: number): () => number {
  let s = seed
  return () => {
    s = (s + 0x6d2b79f5) | 0
    let t = Math.imul(s ^ (s >>> 15), 1 | s)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** What the database must hold once the streams are drained. */
interface Expected {
  likes: number
  favorites: number
  plays: number
}

/** Appends `EVENTS` events of `mix` to the partition streams, as the write path's scripts do. */
async function fill(keys: InteractionKeys, mix: Mix): Promise<Expected> {
  const random = seeded(mix === 'hot' ? 2 : 1)
  const state = new Map<string, boolean>()
  const expected: Expected = { likes: 0, favorites: 0, plays: 0 }
  const now = String(Date.now())
  let pipeline = redis.pipeline()
  for (let i = 0; i < EVENTS; i++) {
    const video = mix === 'hot' && random() < 0.9 ? 1 : 1 + Math.floor(random() * VIDEOS)
    const stream = keys.stream(keys.partitionOf(String(video)))
    const r = random()
    if (r < 0.5) {
      pipeline.xadd(stream, '*', 'k', 'play', 'v', String(video), 'w', `u${i + 1}`, 't', now)
      expected.plays++
    } else {
      const kind = r < 0.8 ? 'like' : 'favorite'
      const user = 1 + Math.floor(random() * USERS)
      const key = `${kind}:${video}:${user}`
      const next = !state.get(key)
      state.set(key, next)
      const field = kind === 'like' ? 'likes' : 'favorites'
      expected[field] += next ? 1 : -1
      pipeline.xadd(
        stream,
        '*',
        'k',
        kind,
        'v',
        String(video),
        'u',
        String(user),
        's',
        next ? '1' : '0',
        't',
        now,
      )
    }
    if (i % 2000 === 1999) {
      await pipeline.exec()
      pipeline = redis.pipeline()
    }
  }
  await pipeline.exec()
  return expected
}

/** Counts PostgreSQL round trips: statements, COPYs, and each transaction's BEGIN and COMMIT. */
function counting(db: SqlDatabase): { db: SqlDatabase; trips: () => number } {
  let trips = 0
  const wrap = (executor: SqlExecutor): SqlExecutor => ({
    query: (text, params) => {
      trips++
      return executor.query(text, params)
    },
    ...(executor.copyFrom && {
      copyFrom: (statement: string, data: string) => {
        trips++
        return executor.copyFrom!(statement, data)
      },
    }),
  })
  return {
    db: {
      ...wrap(db),
      transaction: (fn) => {
        trips += 2
        return db.transaction((tx) => fn(wrap(tx)))
      },
    },
    trips: () => trips,
  }
}

/**
 * CPU time (ms) the PostgreSQL backends of `schema`'s pool have used since they started, read from
 * /proc (the server is local); they serve only this run. NaN when /proc has no such process.
 */
async function backendCpuMs(schema: string): Promise<number> {
  const { rows } = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
    [schema],
  )
  let ms = 0
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
      ms += (Number(fields[11]) + Number(fields[12])) * 10 // utime + stime, in 10 ms clock ticks
    } catch {
      return Number.NaN
    }
  }
  return ms
}

/** Times the consumer's handler calls (the apply: parse, fence, pending check, SQL). */
function timeHandler(consumer: StreamGroupConsumer): () => number {
  let ms = 0
  const options = consumer.options as { handler: typeof consumer.options.handler }
  const handler = options.handler
  options.handler = async (entries) => {
    const started = performance.now()
    try {
      return await handler(entries)
    } finally {
      ms += performance.now() - started
    }
  }
  return () => ms
}

async function drained(consumer: StreamGroupConsumer, events: number): Promise<void> {
  while (consumer.stats.applied < events) await new Promise((resolve) => setTimeout(resolve, 5))
  for (;;) {
    const lag = await consumer.maintain()
    if (lag.pending === 0 && lag.undelivered === 0) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

interface Run {
  mix: Mix
  applier: Applier
  batchSize: number
  events: number
  seconds: number
  eventsPerSec: number
  applyEventsPerSec: number
  batches: number
  roundTripsPerBatch: number
  /** PostgreSQL backend CPU per event (µs): independent of how busy the box is, unlike the rates. */
  pgCpuUsPerEvent: number
  /** This process's CPU per event (µs): the consumer's reads, parsing, the handler's encoding. */
  nodeCpuUsPerEvent: number
}

async function flushRun(mix: Mix, applier: Applier, batchSize: number): Promise<Run> {
  const prefix = `bench:flush:${randomBytes(4).toString('hex')}`
  const keys = new InteractionKeys(prefix, PARTITIONS)
  const { schema, pool } = await freshSchema(VIDEOS)
  try {
    const expected = await fill(keys, mix)
    const unnest = applier === 'new, unnest' || applier === 'new, unnest, in turn'
    const { db, trips } = counting(pgPoolDatabase(pool, unnest ? {} : { copyFrom }))
    // the bench's consumer options: blockMs short so the drained check is not held by a blocking read
    const common = { prefix, partitions: PARTITIONS, tables: TABLES, batchSize, blockMs: 50 }
    const consumer =
      applier === 'new' || unnest
        ? createInteractionFlush(redis, db, {
            ...common,
            // off for the A/B row only; the default (on) reads the next batch during the apply
            ...(applier === 'new, unnest, in turn' && { readAhead: false }),
          })
        : applier === 'previous'
          ? createPreviousFlush(redis, db, common)
          : new StreamGroupConsumer(redis, {
              sources: keys
                .allPartitions()
                .map((p) => ({ stream: keys.stream(p), deadLetter: keys.dead(p) })),
              group: 'flush',
              batchSize,
              blockMs: 50,
              compactRead: applier === 'read only, compact',
              handler: async () => undefined,
            })
    const handlerMs = timeHandler(consumer)
    const started = performance.now()
    const cpu = process.cpuUsage()
    consumer.start()
    await drained(consumer, EVENTS)
    const seconds = (performance.now() - started) / 1000
    const nodeCpu = process.cpuUsage(cpu)
    await consumer.stop()
    const pgCpuMs = await backendCpuMs(schema)
    if (!applier.startsWith('read only')) {
      const { rows } = await pool.query(
        `SELECT sum(like_count)::int AS likes, sum(favorite_count)::int AS favorites, sum(play_count)::int AS plays,
           (SELECT count(*)::int FROM video_likes) + (SELECT count(*)::int FROM video_favorites)
             + (SELECT count(*)::int FROM video_plays) AS rows
         FROM videos`,
      )
      const got = rows[0] as Expected & { rows: number }
      const want = { ...expected, rows: expected.likes + expected.favorites + expected.plays }
      if (JSON.stringify(got) !== JSON.stringify(want))
        throw new Error(
          `${applier} ${mix}: database ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`,
        )
    }
    const batches = consumer.stats.batches
    return {
      mix,
      applier,
      batchSize,
      events: EVENTS,
      seconds: +seconds.toFixed(2),
      eventsPerSec: Math.round(EVENTS / seconds),
      applyEventsPerSec: applier.startsWith('read only') ? 0 : Math.round(EVENTS / (handlerMs() / 1000)),
      batches,
      roundTripsPerBatch: +(trips() / Math.max(1, batches)).toFixed(1),
      pgCpuUsPerEvent: +((pgCpuMs * 1000) / EVENTS).toFixed(1),
      nodeCpuUsPerEvent: +((nodeCpu.user + nodeCpu.system) / EVENTS).toFixed(1),
    }
  } finally {
    await deleteByPrefix(redis, prefix)
    await dropFreshSchema(schema, pool)
  }
}

async function toggleBench() {
  const prefix = `bench:flush:${randomBytes(4).toString('hex')}`
  const ix = new Interactions(redis, { prefix, partitions: PARTITIONS })
  const runLanes = async (total: number, op: (i: number) => Promise<unknown>) => {
    let next = 0
    const started = performance.now()
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < total) await op(next++)
      }),
    )
    return total / ((performance.now() - started) / 1000)
  }
  const library = await runLanes(TOGGLES, (i) => ix.setLiked(1 + (i % 1000), 1 + (i % 5003), i % 3 !== 0))
  const bare = await runLanes(TOGGLES, (i) =>
    redis.sadd(`${prefix}:bare:${1 + (i % 1000)}`, String(i % 5003)),
  )
  await deleteByPrefix(redis, prefix)
  return { libraryOpsPerSec: Math.round(library), bareSaddOpsPerSec: Math.round(bare) }
}

/** End to end with the library's flush at its defaults: the write path at a steady rate, the lag of each event. */
async function lagBench() {
  const prefix = `bench:flush:${randomBytes(4).toString('hex')}`
  const videos = 1000
  const { schema, pool } = await freshSchema(videos)
  const lags: number[] = []
  const batches: number[] = []
  // blockMs short only so the drained check is not held by a blocking read; batch size: the default
  const consumer = createInteractionFlush(redis, pgPoolDatabase(pool, { copyFrom }), {
    prefix,
    partitions: PARTITIONS,
    tables: TABLES,
    blockMs: 100,
  })
  const options = consumer.options as { handler: typeof consumer.options.handler }
  const handler = options.handler
  options.handler = async (entries) => {
    const outcome = await handler(entries)
    const now = Date.now()
    batches.push(entries.length)
    for (const e of entries) lags.push(now - Number(e.fields.t))
    return outcome
  }
  await consumer.ensureGroups()
  consumer.start()
  const producer = spawnTs(
    new URL('./steady_producer.ts', import.meta.url),
    [prefix, String(PARTITIONS), String(STEADY_RATE), String(STEADY_SECONDS), String(videos)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let out = ''
  producer.stdout?.on('data', (chunk) => {
    out += chunk
  })
  await new Promise((resolve) => producer.once('exit', resolve))
  const produced = JSON.parse(out.trim().split('\n').pop() || '{}') as {
    sent?: number
    events?: number
    failed?: number
  }
  await drained(consumer, produced.events ?? 0)
  await consumer.stop()
  await deleteByPrefix(redis, prefix)
  await dropFreshSchema(schema, pool)
  lags.sort((a, b) => a - b)
  batches.sort((a, b) => a - b)
  return {
    targetEventsPerSec: STEADY_RATE,
    seconds: STEADY_SECONDS,
    events: produced.events,
    failedWrites: produced.failed,
    applied: lags.length,
    lagP50Ms: percentile(lags, 50),
    lagP99Ms: percentile(lags, 99),
    lagMaxMs: lags.at(-1),
    batchSizeP50: percentile(batches, 50),
  }
}

await admin.connect()
// the rates depend on what else the 2 cores run: the load average before and after says how much
const loadBefore = loadavg()
console.log(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(', ')}`)
const runs: Run[] = []
for (let round = 0; round < ROUNDS; round++)
  for (const batchSize of BATCH_SIZES)
    for (const mix of MIXES)
      for (const applier of APPLIERS) {
        if (applier.startsWith('read only') && round > 0) continue
        const run = await flushRun(mix, applier, batchSize)
        console.error(JSON.stringify(run))
        runs.push(run)
      }
const rows = BATCH_SIZES.flatMap((batchSize) =>
  (['uniform', 'hot'] as const).map((mix) => {
    const of = (applier: Applier) =>
      runs.filter((r) => r.mix === mix && r.batchSize === batchSize && r.applier === applier)
    const summary = (applier: Applier) => ({
      eventsPerSec: Math.round(median(of(applier).map((r) => r.eventsPerSec))),
      applyEventsPerSec: Math.round(median(of(applier).map((r) => r.applyEventsPerSec))),
      roundTripsPerBatch: median(of(applier).map((r) => r.roundTripsPerBatch)),
      pgCpuUsPerEvent: +median(of(applier).map((r) => r.pgCpuUsPerEvent)).toFixed(1),
      nodeCpuUsPerEvent: +median(of(applier).map((r) => r.nodeCpuUsPerEvent)).toFixed(1),
    })
    const previous = summary('previous')
    const current = summary('new')
    const inTurn = summary('new, unnest, in turn')
    const unnestRow = summary('new, unnest')
    return {
      mix,
      batchSize,
      previous,
      new: current,
      newUnnest: unnestRow,
      newUnnestInTurn: inTurn,
      readAheadRatio: +(unnestRow.eventsPerSec / inTurn.eventsPerSec).toFixed(2),
      readOnlyEventsPerSec: summary('read only').eventsPerSec,
      readOnly: summary('read only'),
      readOnlyCompact: summary('read only, compact'),
      ratio: +(current.eventsPerSec / previous.eventsPerSec).toFixed(2),
      applyRatio: +(current.applyEventsPerSec / previous.applyEventsPerSec).toFixed(2),
    }
  }),
)
console.log(
  `load average after the flush runs: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}`,
)
console.log(
  `\n| flush, one consumer, ${PARTITIONS} partitions (median of ${ROUNDS}) | batch | previous events/s | new events/s | ratio | previous apply events/s | new apply events/s | apply ratio | new without COPY: events/s, apply | statements/batch (round trips incl. BEGIN, COMMIT, COPY) previous → new | PostgreSQL CPU µs/event previous → new (no COPY) | Node CPU µs/event previous → new | read-only ceiling events/s | unnest in turn → read ahead: events/s (ratio); Node CPU µs/event; PostgreSQL CPU µs/event | read only, plain → compact: events/s; Node CPU µs/event |`,
)
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|')
for (const r of rows)
  console.log(
    `| ${r.mix === 'hot' ? '90 % on one video' : 'uniform, 10,000 videos'} | ${r.batchSize} | ${r.previous.eventsPerSec} | ${r.new.eventsPerSec} | ${r.ratio}× | ${r.previous.applyEventsPerSec} | ${r.new.applyEventsPerSec} | ${r.applyRatio}× | ${r.newUnnest.eventsPerSec}, ${r.newUnnest.applyEventsPerSec} | ${r.previous.roundTripsPerBatch} → ${r.new.roundTripsPerBatch} | ${r.previous.pgCpuUsPerEvent} → ${r.new.pgCpuUsPerEvent} (${r.newUnnest.pgCpuUsPerEvent}) | ${r.previous.nodeCpuUsPerEvent} → ${r.new.nodeCpuUsPerEvent} | ${r.readOnlyEventsPerSec} | ${r.newUnnestInTurn.eventsPerSec} → ${r.newUnnest.eventsPerSec} (${r.readAheadRatio}×); ${r.newUnnestInTurn.nodeCpuUsPerEvent} → ${r.newUnnest.nodeCpuUsPerEvent}; ${r.newUnnestInTurn.pgCpuUsPerEvent} → ${r.newUnnest.pgCpuUsPerEvent} | ${r.readOnly.eventsPerSec} → ${r.readOnlyCompact.eventsPerSec}; ${r.readOnly.nodeCpuUsPerEvent} → ${r.readOnlyCompact.nodeCpuUsPerEvent} |`,
  )
if (args['no-tail']) {
  await admin.end()
  redis.disconnect()
  process.exit(0)
}
const toggles = await toggleBench()
const lag = await lagBench()
await admin.end()
redis.disconnect()

const result = {
  date: new Date().toISOString(),
  machine: 'shared 2-core VM; Redis 7.0 and PostgreSQL 15 on localhost, other suites running meanwhile',
  partitions: PARTITIONS,
  loadAverageBefore: loadBefore,
  loadAverageAfter: loadavg(),
  videos: VIDEOS,
  eventsPerRun: EVENTS,
  rounds: ROUNDS,
  flush: rows,
  runs,
  toggles,
  lag,
}
mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
writeFileSync(new URL('../results/flush.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
console.log('\n| like toggle (64 in flight) | ops/s |\n|---|---|')
console.log(`| floodgate setLiked (Lua: set + rank + bucket + XADD) | ${toggles.libraryOpsPerSec} |`)
console.log(`| bare SADD baseline | ${toggles.bareSaddOpsPerSec} |`)
console.log(
  '\n| steady load, library flush at its defaults | events | lag p50 ms | lag p99 ms | max ms | batch p50 |\n|---|---|---|---|---|---|',
)
console.log(
  `| ${lag.targetEventsPerSec}/s for ${lag.seconds} s | ${lag.applied} | ${lag.lagP50Ms} | ${lag.lagP99Ms} | ${lag.lagMaxMs} | ${lag.batchSizeP50} |`,
)
