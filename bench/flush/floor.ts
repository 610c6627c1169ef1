/**
 * The flush's PostgreSQL floor: what the rows an event must leave cost the server by themselves,
 * with no client, no parsing, no staging table and no consumer — rows generated inside PostgreSQL
 * (`generate_series`), one statement per batch, in video-api's own tables and indexes
 * (`interactionSchemaSql(videoInteractionTables)`, 10,000 videos). For each kind of row, the
 * backend's CPU (from /proc: the server must be local) for BATCHES statements of BATCH rows, minus
 * the same statement's SELECT alone (the generation), per row:
 *
 * - play log row (`video_plays`: text key `<video>:<stream id>`, video index), `ON CONFLICT DO NOTHING`;
 * - like row (`video_likes`: primary key and the user index), `ON CONFLICT DO NOTHING`;
 * - watermark row (`interaction_watermarks`), the applier's upsert with its newer-than check;
 * - count update, one per distinct video per batch (the applier's one update per item per batch).
 *
 * Then the mix of `npm run bench:flush` (50 % plays, 50 % like/favourite flips, uniform over
 * 10,000 videos): µs per event and the events/s that leaves one fully busy core for PostgreSQL
 * alone. The applier (`npm run bench:flush`) does more than this floor (it loads the batch, joins
 * the watermarks, checks the videos exist, commits); this is what no applier of these tables can
 * go under.
 *
 *   node --conditions=floodgate-source --import tsx bench/flush/floor.ts [--rounds 3] [--batches 40]
 *
 * Writes bench/results/flush-floor.json.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { interactionSchemaSql } from 'floodgate'
import pg from 'pg'
import { videoInteractionTables } from '../../apps/video-api/src/interactions/tables.js'
import { processCpuMs } from '../support/process_cpu.js'

const { values: args } = parseArgs({
  options: { rounds: { type: 'string' }, batches: { type: 'string' } },
})
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const ROUNDS = Number(args.rounds ?? 3)
/** Statements per measurement: 40 × 5,000 rows = 200,000 rows, ~1–2 s of backend CPU each. */
const BATCHES = Number(args.batches ?? 40)
/** The flush's default batch (INTERACTION_DEFAULTS.flushBatchSize). */
const BATCH = 5_000
const VIDEOS = 10_000
const USERS = 100_000
/** `npm run bench:flush`'s mix: half plays, half membership flips (like or favourite). */
const PLAY_SHARE = 0.5

type RowKind = 'play' | 'like' | 'watermark' | 'count update'

/**
 * The generating SELECT of batch `b` and the statement writing its rows. Ids differ per batch
 * (`b` in the key), so each batch inserts new rows as the flush does.
 */
function statements(kind: RowKind, b: number): { select: string; write: string } {
  const rows = `generate_series(1, ${BATCH}) g`
  switch (kind) {
    case 'play': {
      const select = `SELECT (g % ${VIDEOS} + 1)::text || ':1733' || lpad(${b}::text, 9, '0') || '-' || g AS event_id,
  g % ${VIDEOS} + 1 AS video_id, 'u:' || (g * 7919 % ${USERS}) AS viewer, now() AS played_at FROM ${rows}`
      return {
        select: `SELECT count(*) FROM (${select}) s`,
        write: `INSERT INTO video_plays (event_id, video_id, viewer, played_at) ${select} ON CONFLICT (event_id) DO NOTHING`,
      }
    }
    case 'like': {
      const select = `SELECT (g * 31 + ${b}) % ${VIDEOS} + 1 AS video_id, (g * 7919 + ${b} * 104729) % ${USERS} AS user_id,
  now() AS created_at FROM ${rows}`
      return {
        select: `SELECT count(*) FROM (${select}) s`,
        write: `INSERT INTO video_likes (video_id, user_id, created_at) ${select} ON CONFLICT DO NOTHING`,
      }
    }
    case 'watermark': {
      const select = `SELECT 1::smallint AS kind, (g * 31 + ${b}) % ${VIDEOS} + 1 AS video_id,
  (g * 7919 + ${b} * 104729) % ${USERS} AS user_id, 1733000000000 + ${b} AS last_ms, g::bigint AS last_seq, true AS active
  FROM ${rows} ORDER BY 1, 2, 3`
      return {
        select: `SELECT count(*) FROM (${select}) s`,
        write: `INSERT INTO interaction_watermarks AS w (kind, video_id, user_id, last_ms, last_seq, active) ${select}
  ON CONFLICT (kind, video_id, user_id) DO UPDATE
    SET last_ms = excluded.last_ms, last_seq = excluded.last_seq, active = excluded.active
    WHERE (excluded.last_ms, excluded.last_seq) > (w.last_ms, w.last_seq)`,
      }
    }
    case 'count update': {
      // the distinct videos of a uniform batch of BATCH events (~3,900 of 5,000), one update each
      const select = `SELECT DISTINCT (hashint4(g + ${b * BATCH}) & 2147483647) % ${VIDEOS} + 1 AS item FROM ${rows}`
      return {
        select: `SELECT count(*) FROM (${select}) s`,
        write: `UPDATE videos v SET like_count = v.like_count + 1, play_count = v.play_count + 1
  FROM (${select}) d WHERE v.id = d.item`,
      }
    }
  }
}

/** Backend CPU (µs) per row written: the statements' CPU minus their SELECTs', over the rows written. */
async function measure(
  client: pg.Client,
  pid: number,
  kind: RowKind,
): Promise<{ usPerRow: number; rows: number }> {
  let selectMs = 0
  let writeMs = 0
  let rows = 0
  for (let b = 0; b < BATCHES; b++) {
    const { select, write } = statements(kind, b)
    let before = processCpuMs(pid)
    await client.query(select)
    selectMs += processCpuMs(pid) - before
    before = processCpuMs(pid)
    rows += (await client.query(write)).rowCount ?? 0
    writeMs += processCpuMs(pid) - before
  }
  return { usPerRow: ((writeMs - selectMs) * 1000) / Math.max(1, rows), rows }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const KINDS: RowKind[] = ['play', 'like', 'watermark', 'count update']
const perKind: Record<RowKind, number[]> = { play: [], like: [], watermark: [], 'count update': [] }
const rowsWritten: Record<RowKind, number[]> = { play: [], like: [], watermark: [], 'count update': [] }
const itemsPerBatch: number[] = []
const loadBefore = loadavg()[0]!
const admin = new pg.Client({ connectionString: DATABASE_URL })
await admin.connect()
for (let round = 0; round < ROUNDS; round++) {
  const schema = `bench_floor_${randomBytes(4).toString('hex')}`
  await admin.query(`CREATE SCHEMA ${schema}`)
  const client = new pg.Client({ connectionString: DATABASE_URL, options: `-c search_path=${schema}` })
  await client.connect()
  try {
    await client.query('CREATE TABLE videos (id bigint PRIMARY KEY)')
    await client.query(`INSERT INTO videos SELECT generate_series(1, ${VIDEOS})`)
    for (const statement of interactionSchemaSql(videoInteractionTables)) await client.query(statement)
    await client.query('VACUUM ANALYZE videos')
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    const pid = rows[0]!.pid
    for (const kind of KINDS) {
      const result = await measure(client, pid, kind)
      perKind[kind].push(result.usPerRow)
      rowsWritten[kind].push(result.rows)
      if (kind === 'count update') itemsPerBatch.push(result.rows / BATCHES)
    }
  } finally {
    await client.end()
    await admin.query(`DROP SCHEMA ${schema} CASCADE`)
  }
}
await admin.end()

const us = Object.fromEntries(KINDS.map((k) => [k, median(perKind[k])])) as Record<RowKind, number>
const countUpdatesPerEvent = median(itemsPerBatch) / BATCH
const floorUsPerEvent =
  PLAY_SHARE * us.play +
  (1 - PLAY_SHARE) * (us.like + us.watermark) +
  countUpdatesPerEvent * us['count update']
const withoutWatermark = floorUsPerEvent - (1 - PLAY_SHARE) * us.watermark
const result = {
  at: new Date().toISOString(),
  loadAverage: { before: loadBefore, after: loadavg()[0]! },
  rounds: ROUNDS,
  rowsPerMeasurement: BATCHES * BATCH,
  usPerRow: us,
  rowsWritten,
  countUpdatesPerEvent,
  mix: { playShare: PLAY_SHARE, floorUsPerEvent, eventsPerCoreSecond: 1e6 / floorUsPerEvent },
  withoutWatermarkRow: { floorUsPerEvent: withoutWatermark, eventsPerCoreSecond: 1e6 / withoutWatermark },
  coresFor100k: (100_000 * floorUsPerEvent) / 1e6,
}
mkdirSync('bench/results', { recursive: true })
writeFileSync('bench/results/flush-floor.json', `${JSON.stringify(result, null, 2)}\n`)
const f = (n: number) => n.toFixed(2)
console.log(
  `load average ${f(result.loadAverage.before)} → ${f(result.loadAverage.after)}; median of ${ROUNDS}`,
)
console.log('| row | backend CPU µs per row |\n|---|---|')
for (const k of KINDS) console.log(`| ${k} | ${f(us[k])} |`)
console.log(
  `mix (${PLAY_SHARE * 100} % plays, ${f(countUpdatesPerEvent)} count updates per event): ${f(floorUsPerEvent)} µs/event` +
    ` = ${Math.round(result.mix.eventsPerCoreSecond)} events/s per core of PostgreSQL alone;` +
    ` without the watermark row ${f(withoutWatermark)} µs = ${Math.round(result.withoutWatermarkRow.eventsPerCoreSecond)};` +
    ` 100,000 events/s need ${f(result.coresFor100k)} cores of PostgreSQL for these rows alone`,
)
