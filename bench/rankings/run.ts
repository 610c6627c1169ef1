/**
 * Ranking query latency with 100,000 videos in the window: the minute-bucket
 * design (ZUNIONSTORE … WEIGHTS into one shared merged result, one recomputer) against
 * the log-space decayed score (one ZADD per event, no re-scoring), plus the
 * all-time read; each bucket-design row beside the previous read path (`previous/`: per-partition
 * cached merges probed on every read, every partition's top read whole), in the same run,
 * interleaved. Run from the repo root:
 *
 *   node --conditions=floodgate-source --import tsx bench/rankings/run.ts [videos] [eventsPerVideo] [partitions] [rounds]
 *
 * `partitions` defaults to `INTERACTION_DEFAULTS.partitions` (300); run it with 16 for the layout
 * before issue 26.
 *
 * Uses the Redis at REDIS_URL (default redis://127.0.0.1:6379) under a unique prefix
 * and deletes its keys afterwards. Writes bench/results/rankings.json.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { deleteByPrefix } from '@floodgate/test-support'
import {
  createRankings,
  DEFAULT_WINDOWS,
  DecayedRankings,
  decayRatePerMs,
  INTERACTION_DEFAULTS,
  InteractionKeys,
  type Rankings,
  type TopQuery,
  toMember,
} from 'floodgate'
import { Redis } from 'ioredis'
import { resolveRankingsLayout } from '../../packages/floodgate/src/rankings/options.js'
import { windowTopKeys } from '../../packages/floodgate/src/rankings/ranking_keys.js'
import { PreviousRankings } from './previous/rankings.js'

const VIDEOS = Number(process.argv[2] ?? 100_000)
const EVENTS_PER_VIDEO = Number(process.argv[3] ?? 2)
const PARTITIONS = Number(process.argv[4] ?? INTERACTION_DEFAULTS.partitions)
/** Queries per cached-read scenario; the recompute scenarios run min(20, ROUNDS). */
const ROUNDS = Number(process.argv[5] ?? 500)
const LIMIT = 50
const ORIGIN_MS = 1_767_225_600_000
const prefix = `bench:rank:${randomBytes(4).toString('hex')}`
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { commandTimeout: 30_000 })
const keys = new InteractionKeys(prefix, PARTITIONS)
// the library's default windows (1 h fresh for 5 s, 24 h for 60 s), as the service runs them
const windows = {
  '1h': { ...DEFAULT_WINDOWS['1h']!, halfLifeMs: DEFAULT_WINDOWS['1h']!.halfLifeMs ?? 900_000 },
  '24h': { ...DEFAULT_WINDOWS['24h']!, halfLifeMs: DEFAULT_WINDOWS['24h']!.halfLifeMs ?? 21_600_000 },
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

interface Scenario {
  label: string
  run: () => Promise<unknown>
  before?: () => Promise<unknown>
}

function summarize(label: string, times: number[]) {
  times.sort((a, b) => a - b)
  const row = {
    scenario: label,
    runs: times.length,
    p50Ms: +percentile(times, 50).toFixed(3),
    p99Ms: +percentile(times, 99).toFixed(3),
    maxMs: +times[times.length - 1]!.toFixed(3),
  }
  console.log(`| ${row.scenario} | ${row.runs} | ${row.p50Ms} | ${row.p99Ms} | ${row.maxMs} |`)
  return row
}

/**
 * Runs the scenarios round-robin (one query of each per round), so they share the
 * machine's load of the moment: on a busy box the ratios stay meaningful.
 */
async function measureInterleaved(scenarios: Scenario[], rounds: number) {
  const times = scenarios.map(() => [] as number[])
  for (let i = 0; i < rounds; i++) {
    for (const [j, s] of scenarios.entries()) {
      if (s.before) await s.before()
      const t = process.hrtime.bigint()
      await s.run()
      times[j]!.push(Number(process.hrtime.bigint() - t) / 1e6)
    }
  }
  return scenarios.map((s, j) => summarize(s.label, times[j]!))
}

/** Seeds buckets (ZINCRBY per event, as the write path does) and decayed scores (the same events). */
async function seed(metric: 'likes' | 'plays', windowMinutes: number, halfLifeMs: number, window: string) {
  const [s] = await redis.time()
  const nowMinute = Math.floor(Number(s) / 60)
  const lambda = decayRatePerMs(halfLifeMs)
  const decayed = new Map<string, number>()
  let pipeline = redis.pipeline()
  let queued = 0
  for (let v = 1; v <= VIDEOS; v++) {
    const id = String(v)
    const p = keys.partitionOf(id)
    for (let e = 0; e < EVENTS_PER_VIDEO; e++) {
      const age = Math.floor(Math.random() * windowMinutes)
      const bucket = keys.rankMinute(p, metric, nowMinute - age)
      pipeline.zincrby(bucket, 1, toMember(id))
      queued++
      // The decayed design's score for the same event, computed as decay-add-1.lua does.
      const x = lambda * ((nowMinute - age) * 60_000 - ORIGIN_MS)
      const old = decayed.get(id)
      decayed.set(id, old === undefined ? x : Math.max(old, x) + Math.log1p(Math.exp(-Math.abs(old - x))))
    }
    if (queued >= 20_000) {
      await pipeline.exec()
      pipeline = redis.pipeline()
      queued = 0
    }
  }
  for (let p = 0; p < PARTITIONS; p++) {
    for (let age = 0; age < windowMinutes; age++)
      pipeline.pexpire(keys.rankMinute(p, metric, nowMinute - age), 3_600_000)
  }
  for (const [id, score] of decayed) {
    pipeline.zadd(
      keys.space.tagged('rank', keys.tagOf(keys.partitionOf(id)), `decay:${metric}:${window}`),
      score,
      toMember(id),
    )
    if (++queued >= 20_000) {
      await pipeline.exec()
      pipeline = redis.pipeline()
      queued = 0
    }
  }
  await pipeline.exec()
}

async function seedAllTime() {
  let pipeline = redis.pipeline()
  for (let p = 0; p < PARTITIONS; p++) {
    for (let i = 0; i < 1000; i++)
      pipeline.zadd(
        keys.rankAll(p, 'likes'),
        Math.floor(Math.random() * 1e6),
        toMember(String(p + i * PARTITIONS)),
      )
  }
  await pipeline.exec()
  pipeline = redis.pipeline()
}

async function cleanup() {
  await deleteByPrefix(redis, prefix)
}

async function main() {
  console.log(
    `Seeding ${VIDEOS} videos × ${EVENTS_PER_VIDEO} events into 1h and 24h windows, ${PARTITIONS} partitions…`,
  )
  const seedStart = Date.now()
  await seed('plays', 60, windows['1h'].halfLifeMs, '1h')
  await seed('likes', 1440, windows['24h'].halfLifeMs, '24h')
  await seedAllTime()
  const seedMs = Date.now() - seedStart
  const info = await redis.info('server')
  const version = /redis_version:(\S+)/.exec(info)?.[1]

  const buckets = createRankings({ redis, prefix, partitions: PARTITIONS, windows, topK: 1000 })
  const decayed = new DecayedRankings({
    redis,
    prefix,
    partitions: PARTITIONS,
    windows,
    topK: 100_000,
    originMs: ORIGIN_MS,
  })
  const previous = new PreviousRankings(
    redis,
    prefix,
    PARTITIONS,
    resolveRankingsLayout({ prefix, partitions: PARTITIONS, windows }).windows,
  )
  // the shared result too: with one present the elected reader answers with it and recomputes behind
  const dropResult = (metric: 'likes' | 'plays', window: string) => async () => {
    const { lock, value } = windowTopKeys(keys, metric, window, LIMIT)
    await redis.del(lock, value)
  }
  const dropPreviousLocks = (metric: 'likes' | 'plays', window: string) => () =>
    previous.dropLocks(metric, window)
  const q = (r: Rankings, query: TopQuery) => () => r.top(query)
  const oneH: TopQuery = { metric: 'plays', window: '1h', limit: LIMIT }
  const day: TopQuery = { metric: 'likes', window: '24h', limit: LIMIT }

  // Same order from both designs? (they see the same events)
  const a = await buckets.top(oneH)
  const b = await decayed.top(oneH)
  const overlap = a.filter((x) => b.some((y) => y.itemId === x.itemId)).length

  console.log('\n| scenario | runs | p50 ms | p99 ms | max ms |\n|---|---|---|---|---|')
  // Warm-up: fill the cached results and the script caches.
  for (const query of [oneH, day]) {
    await buckets.top(query)
    await decayed.top(query)
    await previous.top(query)
  }
  const all: TopQuery = { metric: 'likes', window: 'all', limit: LIMIT }
  const same = JSON.stringify(await buckets.top(all)) === JSON.stringify(await previous.top(all))
  console.log(`all-time top ${LIMIT}: same answer as the previous read: ${same}`)
  const rows = [
    ...(await measureInterleaved(
      [
        {
          label: 'buckets 1h, cached result (what most queries see): one shared merged top',
          run: q(buckets, oneH),
        },
        { label: `previous: buckets 1h, cached result (${PARTITIONS} × 4 probes)`, run: q(previous, oneH) },
        { label: `decayed score 1h (threshold read of ${PARTITIONS} ZSETs)`, run: q(decayed, oneH) },
        { label: 'buckets 24h, cached result: one shared merged top', run: q(buckets, day) },
        { label: `previous: buckets 24h, cached result (${PARTITIONS} × 4 probes)`, run: q(previous, day) },
        { label: `decayed score 24h (threshold read of ${PARTITIONS} ZSETs)`, run: q(decayed, day) },
        { label: `all-time (threshold read of ${PARTITIONS} top-K ZSETs, exact)`, run: q(buckets, all) },
        { label: `previous: all-time (${PARTITIONS} × ZREVRANGE 0 ${LIMIT - 1})`, run: q(previous, all) },
      ],
      ROUNDS,
    )),
    ...(await measureInterleaved(
      [
        {
          label: `buckets 1h, recompute (${PARTITIONS} × window-top-1.lua over 60 buckets)`,
          run: q(buckets, oneH),
          before: dropResult('plays', '1h'),
        },
        {
          label: `previous: buckets 1h, recompute (${PARTITIONS} × ZUNIONSTORE of 60 buckets sent as arguments)`,
          run: q(previous, oneH),
          before: dropPreviousLocks('plays', '1h'),
        },
        {
          label: `buckets 24h, recompute (${PARTITIONS} × window-top-1.lua over 1440 buckets)`,
          run: q(buckets, day),
          before: dropResult('likes', '24h'),
        },
        {
          label: `previous: buckets 24h, recompute (${PARTITIONS} × ZUNIONSTORE of 1440 buckets sent as arguments)`,
          run: q(previous, day),
          before: dropPreviousLocks('likes', '24h'),
        },
      ],
      Math.min(20, ROUNDS),
    )),
  ]
  // Write cost of the alternative: one Lua step per event per window.
  const writes = 5000
  const wStart = Date.now()
  for (let i = 0; i < writes; i++) await decayed.record(String(1 + (i % VIDEOS)), 'plays')
  const decayedRecordOpsPerSec = Math.round(writes / ((Date.now() - wStart) / 1000))
  console.log(
    `\ndecayed record(): ${decayedRecordOpsPerSec} events/s sequential (2 windows = 2 Lua steps per event)`,
  )
  console.log(`top-${LIMIT} overlap between designs on the same events (1h): ${overlap}/${LIMIT}`)
  const usedMemory = /used_memory_human:(\S+)/.exec(await redis.info('memory'))?.[1]
  const result = {
    date: new Date().toISOString(),
    redis: version,
    videos: VIDEOS,
    eventsPerVideo: EVENTS_PER_VIDEO,
    partitions: PARTITIONS,
    limit: LIMIT,
    seedMs,
    usedMemoryWhileSeeded: usedMemory,
    rows,
    sameAllTimeAnswerAsPrevious: same,
    decayedRecordOpsPerSec,
    overlapTop50: overlap,
  }
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
  // an explicit partition count (a comparison run) writes a file of its own
  const file = process.argv[4] === undefined ? 'rankings.json' : `rankings-p${PARTITIONS}.json`
  writeFileSync(new URL(`../results/${file}`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
}

try {
  await main()
} finally {
  await cleanup()
  redis.disconnect()
}
