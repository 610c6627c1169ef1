import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { deleteByPrefix, dropSchema } from '@floodgate/test-support'
import {
  createInteractionFlush,
  InteractionApplier,
  type InteractionEvent,
  InteractionKeys,
  Interactions,
  interactionSchemaSql,
  parseInteractionEvent,
  pgPoolDatabase,
  type StreamEntry,
  StreamGroupConsumer,
} from 'floodgate'
import { Redis } from 'ioredis'
import pg from 'pg'
import { videoInteractionTables } from '../../apps/video-api/src/interactions/tables.js'
import { spawnTs } from '../support/spawn_ts.js'

const QUICK = process.argv.includes('--quick')
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const PARTITIONS = 16
/** video-api's schema, which the fresh schema below reproduces. */
const TABLES = videoInteractionTables
const VIDEOS = 1000
const TOGGLES = QUICK ? 5_000 : 30_000
const FLUSH_EVENTS = QUICK ? 10_000 : 50_000
/** The per-event baseline is ~50x slower: it gets fewer events (its rate is what is compared). */
const PER_EVENT_EVENTS = QUICK ? 2_000 : 5_000
const STEADY_RATE = 5000
const STEADY_SECONDS = QUICK ? 4 : 10
const redis = new Redis(REDIS_URL, { commandTimeout: 10_000 })
const admin = new pg.Client({ connectionString: DATABASE_URL })

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

async function freshSchema(): Promise<{ schema: string; pool: pg.Pool }> {
  const schema = `bench_flush_${randomBytes(4).toString('hex')}`
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.query(`SET search_path = ${schema}`)
  await admin.query('CREATE TABLE videos (id bigint PRIMARY KEY)')
  await admin.query('INSERT INTO videos SELECT generate_series(1, $1::int)', [VIDEOS])
  for (const statement of interactionSchemaSql(TABLES)) await admin.query(statement)
  await admin.query('SET search_path = public')
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4, options: `-c search_path=${schema}` })
  return { schema, pool }
}

async function dropFreshSchema(schema: string, pool: pg.Pool): Promise<void> {
  await pool.end()
  await dropSchema(schema, DATABASE_URL)
}

async function runLanes(total: number, lanes: number, op: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < total) await op(next++)
    }),
  )
  return total / ((performance.now() - started) / 1000)
}

async function toggleBench() {
  const prefix = `bench:flush:${randomBytes(4).toString('hex')}`
  const ix = new Interactions(redis, { prefix, partitions: PARTITIONS })
  const library = await runLanes(TOGGLES, 64, (i) =>
    ix.setLiked(1 + (i % VIDEOS), 1 + (i % 5003), i % 3 !== 0),
  )
  const bare = await runLanes(TOGGLES, 64, (i) =>
    redis.sadd(`${prefix}:bare:${1 + (i % VIDEOS)}`, String(i % 5003)),
  )
  await deleteByPrefix(redis, prefix)
  return { libraryOpsPerSec: Math.round(library), bareSaddOpsPerSec: Math.round(bare) }
}

/** Fills the streams with `count` events (half like flips, half plays by fresh viewers). */
async function fill(ix: Interactions, count: number): Promise<number> {
  const liked = new Set<string>()
  let events = 0
  await runLanes(count, 64, async (i) => {
    const video = 1 + (i % VIDEOS)
    if (i % 2 === 0) {
      if ((await ix.recordPlay(video, `u${i + 1}`)).counted) events++
      return
    }
    const user = 1 + (i % 4999)
    const key = `${video}:${user}`
    const next = !liked.has(key)
    if (next) liked.add(key)
    else liked.delete(key)
    if ((await ix.setLiked(video, user, next)).changed) events++
  })
  return events
}

async function waitDrained(consumer: StreamGroupConsumer): Promise<void> {
  for (;;) {
    const lag = await consumer.maintain()
    if (lag.pending === 0 && lag.undelivered === 0) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

async function flushBench(batchSize: number, mode: 'set-based' | 'per-event') {
  const prefix = `bench:flush:${randomBytes(4).toString('hex')}`
  const { schema, pool } = await freshSchema()
  const ix = new Interactions(redis, { prefix, partitions: PARTITIONS })
  const events = await fill(ix, mode === 'set-based' ? FLUSH_EVENTS : PER_EVENT_EVENTS)
  const db = pgPoolDatabase(pool)
  const consumer =
    mode === 'set-based'
      ? createInteractionFlush(redis, db, {
          prefix,
          partitions: PARTITIONS,
          tables: TABLES,
          batchSize,
          blockMs: 50,
        })
      : perEventConsumer(prefix, pool, batchSize)
  const started = performance.now()
  consumer.start()
  await waitDrained(consumer)
  const seconds = (performance.now() - started) / 1000
  await consumer.stop()
  await deleteByPrefix(redis, prefix)
  await dropFreshSchema(schema, pool)
  return { mode, batchSize, events, seconds: +seconds.toFixed(2), eventsPerSec: Math.round(events / seconds) }
}

/** Baseline: the same stream and order-safe SQL, but one transaction per event (no set-based batch). */
function perEventConsumer(prefix: string, pool: pg.Pool, batchSize: number): StreamGroupConsumer {
  const keys = new InteractionKeys(prefix, PARTITIONS)
  const applier = new InteractionApplier(TABLES)
  const db = pgPoolDatabase(pool)
  return new StreamGroupConsumer(redis, {
    sources: keys.allPartitions().map((p) => ({ stream: keys.stream(p), deadLetter: keys.dead(p) })),
    group: 'flush',
    batchSize,
    blockMs: 50,
    handler: async (entries: readonly StreamEntry[]) => {
      for (const entry of entries) await applier.apply(db, [parseInteractionEvent(entry)])
      return undefined
    },
  })
}

async function lagBench() {
  const prefix = `bench:flush:${randomBytes(4).toString('hex')}`
  const { schema, pool } = await freshSchema()
  const keys = new InteractionKeys(prefix, PARTITIONS)
  const applier = new InteractionApplier(TABLES)
  const db = pgPoolDatabase(pool)
  const lags: number[] = []
  const batches: number[] = []
  const consumer = new StreamGroupConsumer(redis, {
    sources: keys.allPartitions().map((p) => ({ stream: keys.stream(p), deadLetter: keys.dead(p) })),
    group: 'flush',
    batchSize: 1000,
    blockMs: 100,
    handler: async (entries: readonly StreamEntry[]) => {
      const events: InteractionEvent[] = entries.map(parseInteractionEvent)
      await applier.apply(db, events)
      const now = Date.now()
      batches.push(entries.length)
      for (const e of entries) lags.push(now - Number(e.fields.t))
      return undefined
    },
  })
  await consumer.ensureGroups()
  consumer.start()
  const producer = spawnTs(
    new URL('./steady_producer.ts', import.meta.url),
    [prefix, String(PARTITIONS), String(STEADY_RATE), String(STEADY_SECONDS), String(VIDEOS)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  )
  let out = ''
  producer.stdout?.on('data', (chunk) => {
    out += chunk
  })
  await new Promise((resolve) => producer.once('exit', resolve))
  await waitDrained(consumer)
  await consumer.stop()
  await deleteByPrefix(redis, prefix)
  await dropFreshSchema(schema, pool)
  const produced = JSON.parse(out.trim().split('\n').pop() ?? '{}') as { sent?: number; events?: number }
  lags.sort((a, b) => a - b)
  batches.sort((a, b) => a - b)
  return {
    targetEventsPerSec: STEADY_RATE,
    seconds: STEADY_SECONDS,
    events: produced.events,
    applied: lags.length,
    lagP50Ms: percentile(lags, 50),
    lagP99Ms: percentile(lags, 99),
    lagMaxMs: lags.at(-1),
    batchSizeP50: percentile(batches, 50),
  }
}

await admin.connect()
const toggles = await toggleBench()
const flush = []
for (const batchSize of [100, 1000, 5000]) flush.push(await flushBench(batchSize, 'set-based'))
flush.push(await flushBench(1000, 'per-event'))
const lag = await lagBench()
await admin.end()
redis.disconnect()

const result = {
  date: new Date().toISOString(),
  machine: 'shared 2-core VM; Redis 7.0 and PostgreSQL 15 on localhost, other suites running meanwhile',
  partitions: PARTITIONS,
  toggles,
  flush,
  lag,
}
mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
writeFileSync(new URL('../results/flush.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
console.log('\n| like toggle (64 in flight) | ops/s |\n|---|---|')
console.log(`| floodgate setLiked (Lua: set + rank + bucket + XADD) | ${toggles.libraryOpsPerSec} |`)
console.log(`| bare SADD baseline | ${toggles.bareSaddOpsPerSec} |`)
console.log('\n| flush | batch | events | s | events/s |\n|---|---|---|---|---|')
for (const f of flush)
  console.log(`| ${f.mode} | ${f.batchSize} | ${f.events} | ${f.seconds} | ${f.eventsPerSec} |`)
console.log(
  '\n| steady load | events | lag p50 ms | lag p99 ms | max ms | batch p50 |\n|---|---|---|---|---|---|',
)
console.log(
  `| ${lag.targetEventsPerSec}/s for ${lag.seconds} s | ${lag.applied} | ${lag.lagP50Ms} | ${lag.lagP99Ms} | ${lag.lagMaxMs} | ${lag.batchSizeP50} |`,
)
