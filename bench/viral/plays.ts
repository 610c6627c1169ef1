/**
 * Plays of one viral item: play dedupe with a key per viewer ("previous": main's play-5.lua before
 * issue 25, kept in bench/viral/previous, called with the keys and arguments main's recordPlay
 * sent) beside the library's viewer hashes in intset buckets per window generation ("buckets":
 * `Interactions.recordPlay` with the defaults, the plays of one poll phase as one
 * play-batch-n.lua call per partition; "buckets, one call per play": with `maxEventsPerCall: 1`,
 * one play-5.lua call per play), in the same run, each on a private redis-server of its own (started
 * here, one after the other, so they never share the CPU).
 *
 *   npm run bench:viral:plays [-- --viewers 100000 --inflight 64]
 *
 * Per layout: VIEWERS new viewers (`u<n>`) play one item, INFLIGHT calls in flight, then each
 * plays it again (repeats, none counted). Reported per layout:
 * - bytes per counted play: `MEMORY USAGE <key> SAMPLES 0` summed over the item's dedupe keys
 *   (`…:seen:<item>:*`, SCAN), divided by the counted plays inside the window (seeded ones too); and "all" = the growth of
 *   `used_memory` over the run once the partition's stream (trimmed by the flush in production)
 *   is deleted, per counted play (keyspace overhead included);
 * - the largest dedupe key (bytes, MEMORY USAGE);
 * - Redis CPU per play: `INFO commandstats` usec of EVALSHA and EVAL (a NOSCRIPT reload) over
 *   the plays (a batched call carries many), reset (CONFIG RESETSTAT) before each phase: new viewers, repeats;
 * - the redis-server process's CPU (INFO cpu, user + system) per play of each phase: sockets and
 *   parsing included, but not inflated when the box is busy (usec_per_call is wall time, and a
 *   descheduled server stretches it);
 * - the slowest command (SLOWLOG, `slowlog-log-slower-than` 100 µs on the private server only).
 * Writes bench/results/viral-plays.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { PrivateRedis } from '@floodgate/test-support'
import {
  INTERACTION_DEFAULTS,
  InteractionKeys,
  Interactions,
  LuaScript,
  PLAY_DEDUPE_DEFAULTS,
  playViewer,
  playViewerHash,
  toMember,
} from 'floodgate'
import { Redis } from 'ioredis'

const { values: args } = parseArgs({
  options: { viewers: { type: 'string' }, inflight: { type: 'string' } },
})
const VIEWERS = Number(args.viewers ?? 100_000)
const INFLIGHT = Number(args.inflight ?? 64)
const ITEM = '1'
const PREFIX = 'viral'
/** SLOWLOG threshold on the private servers (µs). */
const SLOWLOG_US = 100
const previousPlay = new LuaScript(new URL('./previous/play-5.lua', import.meta.url))
const libraryPlay = new LuaScript(
  new URL('../../packages/floodgate/src/interactions/lua/play-6.lua', import.meta.url),
)
/** The library's defaults, as main's recordPlay and today's pass them. */
const WINDOW_MS = INTERACTION_DEFAULTS.playDedupeWindowMs
const TOP_K = INTERACTION_DEFAULTS.topK
const BUCKET_TTL_MS = INTERACTION_DEFAULTS.bucketTtlMs

/**
 * `buckets, g-1 full`: the same, with the previous window generation already holding VIEWERS other
 * viewers of the item (seeded through the library's play-6.lua on a clock one window back, its
 * tests-only ARGV[9]), so every new play also looks there, as on a video viral for longer than W.
 */
type Layout = 'previous' | 'buckets, one call per play' | 'buckets' | 'buckets, g-1 full'
type RecordPlay = (item: string, viewer: string) => Promise<boolean>

/** What main's `Interactions.recordPlay` sent (library defaults: W 600 s, top K 1000, bucket TTL 24 h 10 min). */
function previousRecordPlay(redis: Redis, keys: InteractionKeys): RecordPlay {
  return async (item, viewer) => {
    const p = keys.partitionOf(item)
    const reply = (await previousPlay.run(
      redis,
      [
        keys.space.tagged('ix', `ix:${p}`, `seen:${item}:${viewer}`),
        keys.plays(item),
        keys.rankAll(p, 'plays'),
        keys.rankMinutePrefix(p, 'plays'),
        keys.stream(p),
      ],
      [WINDOW_MS, item, toMember(item), viewer, TOP_K, BUCKET_TTL_MS],
    )) as [number, number, string]
    return reply[0] === 1
  }
}

async function inFlight(n: number, call: (i: number) => Promise<boolean>): Promise<number> {
  let next = 0
  let counted = 0
  const lane = async () => {
    while (next < n) {
      if (await call(next++)) counted++
    }
  }
  await Promise.all(Array.from({ length: INFLIGHT }, lane))
  return counted
}

function infoField(info: string, name: string): number {
  const match = new RegExp(`^${name}:(.*)$`, 'm').exec(info)
  return match ? Number(match[1]) : Number.NaN
}

/** CPU seconds the redis-server process has used (user + system; not inflated by preemption as wall time is). */
async function serverCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu')
  return infoField(info, 'used_cpu_user') + infoField(info, 'used_cpu_sys')
}

/** Redis µs of the script calls since the last CONFIG RESETSTAT (EVALSHA and EVAL together), per play. */
async function scriptUsecPerPlay(redis: Redis, plays: number): Promise<number> {
  const info = await redis.info('commandstats')
  let usec = 0
  let calls = 0
  for (const cmd of ['evalsha', 'eval']) {
    const match = new RegExp(`^cmdstat_${cmd}:calls=(\\d+),usec=(\\d+)`, 'm').exec(info)
    if (match) {
      calls += Number(match[1])
      usec += Number(match[2])
    }
  }
  return calls === 0 ? Number.NaN : usec / plays
}

/** The item's dedupe keys: main's key per viewer (its `{ix:<p>}` tag) for "previous", else the buckets. */
async function dedupeKeyBytes(redis: Redis, keys: InteractionKeys, layout: Layout) {
  const p = keys.partitionOf(ITEM)
  const prefix =
    layout === 'previous' ? keys.space.tagged('ix', `ix:${p}`, `seen:${ITEM}:`) : keys.playSeenPrefix(ITEM)
  const pattern = `${prefix}*`
  let cursor = '0'
  let total = 0
  let largest = 0
  let count = 0
  do {
    const [nextCursor, page] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = nextCursor
    const pipeline = redis.pipeline()
    for (const key of page) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')
    for (const [error, bytes] of (await pipeline.exec()) ?? []) {
      if (error) throw error
      total += Number(bytes)
      largest = Math.max(largest, Number(bytes))
      count++
    }
  } while (cursor !== '0')
  return { total, largest, count }
}

/** The slowest command in the SLOWLOG (a script call named `script`: only the layout's play script runs). */
async function slowest(redis: Redis, script: string) {
  const entries = (await redis.call('SLOWLOG', 'GET', '-1')) as [number, number, number, string[]][]
  let worst = { us: 0, command: '-' }
  for (const [, , us, argv] of entries) {
    if (us <= worst.us) continue
    const name = argv[0]?.toLowerCase() ?? '?'
    worst = { us, command: name === 'evalsha' || name === 'eval' ? script : name }
  }
  return { ...worst, over: entries.length }
}

/** VIEWERS other viewers counted one window back (the previous generation); returns how many. */
async function seedPreviousGeneration(redis: Redis, keys: InteractionKeys): Promise<number> {
  const [seconds, micros] = await redis.time()
  const backMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - WINDOW_MS
  const p = keys.partitionOf(ITEM)
  const itemKeys = [
    keys.playSeenPrefix(ITEM),
    keys.plays(ITEM),
    keys.rankAll(p, 'plays'),
    keys.rankMinutePrefix(p, 'plays'),
    keys.stream(p),
    keys.gone(ITEM),
  ]
  return inFlight(VIEWERS, async (i) => {
    const viewer = playViewer({ userId: VIEWERS + 1 + i })
    const args = [WINDOW_MS, ITEM, toMember(ITEM), viewer, TOP_K, BUCKET_TTL_MS]
    args.push(playViewerHash(viewer), PLAY_DEDUPE_DEFAULTS.bucketLoad, backMs)
    const reply = (await libraryPlay.run(redis, itemKeys, args)) as [number, number, string]
    return reply[0] === 1
  })
}

async function run(layout: Layout) {
  const server = await PrivateRedis.start()
  // 30 s, not floodgate's default 2 s cap: a bench of Redis CPU per call loads 100,000 plays back to
  // back; the cap protects requests, and a timed-out call here would only skew the count
  const redis = new Redis(server.port, '127.0.0.1', { commandTimeout: 30_000 })
  try {
    await redis.config('SET', 'slowlog-log-slower-than', String(SLOWLOG_US))
    await redis.config('SET', 'slowlog-max-len', '1000000')
    const keys = new InteractionKeys(PREFIX)
    const interactions = new Interactions(redis, {
      prefix: PREFIX,
      ...(layout === 'buckets, one call per play' ? { maxEventsPerCall: 1 } : {}),
    })
    const play: RecordPlay =
      layout === 'previous'
        ? previousRecordPlay(redis, keys)
        : async (item, viewer) => (await interactions.recordPlay(item, viewer)).counted
    await play('2', 'u1') // loads the script, on another item
    const usedBefore = infoField(await redis.info('memory'), 'used_memory')
    const seeded = layout === 'buckets, g-1 full' ? await seedPreviousGeneration(redis, keys) : 0
    const viewers = Array.from({ length: VIEWERS }, (_, i) => playViewer({ userId: i + 1 }))

    await redis.config('RESETSTAT')
    await redis.call('SLOWLOG', 'RESET')
    let started = performance.now()
    let cpu = await serverCpuSeconds(redis)
    const counted = await inFlight(VIEWERS, (i) => play(ITEM, viewers[i]!))
    const newSeconds = (performance.now() - started) / 1000
    const newCpuUs = ((await serverCpuSeconds(redis)) - cpu) * 1e6
    const newUsec = await scriptUsecPerPlay(redis, VIEWERS)

    await redis.config('RESETSTAT')
    started = performance.now()
    cpu = await serverCpuSeconds(redis)
    const repeatsCounted = await inFlight(VIEWERS, (i) => play(ITEM, viewers[i]!))
    const repeatSeconds = (performance.now() - started) / 1000
    const repeatCpuUs = ((await serverCpuSeconds(redis)) - cpu) * 1e6
    const repeatUsec = await scriptUsecPerPlay(redis, VIEWERS)

    const script = { previous: 'previous play-5.lua', 'buckets, one call per play': 'play-6.lua' }
    const slow = await slowest(redis, script[layout as keyof typeof script] ?? 'play-batch-n.lua')
    await redis.call('SLOWLOG', 'RESET')
    const memory = await dedupeKeyBytes(redis, keys, layout)
    await redis.del(keys.stream(keys.partitionOf(ITEM)))
    const usedAfter = infoField(await redis.info('memory'), 'used_memory')
    const plays = Number(await redis.get(keys.plays(ITEM))) - seeded
    interactions.close()
    return {
      layout,
      viewers: VIEWERS,
      counted,
      repeatsCounted,
      countedInRedis: plays,
      dedupeKeys: memory.count,
      seededInPreviousGeneration: seeded,
      bytesPerCountedPlay: +(memory.total / (counted + seeded)).toFixed(2),
      allBytesPerCountedPlay: +((usedAfter - usedBefore) / (counted + seeded)).toFixed(2),
      largestKeyBytes: memory.largest,
      usecPerNewPlay: +newUsec.toFixed(2),
      usecPerRepeat: +repeatUsec.toFixed(2),
      serverCpuUsPerNewPlay: +(newCpuUs / VIEWERS).toFixed(2),
      serverCpuUsPerRepeat: +(repeatCpuUs / VIEWERS).toFixed(2),
      newPlaysPerSecond: Math.round(VIEWERS / newSeconds),
      repeatsPerSecond: Math.round(VIEWERS / repeatSeconds),
      slowestUs: slow.us,
      slowestCommand: slow.command,
      commandsOver100us: slow.over,
    }
  } finally {
    redis.disconnect()
    await server.destroy()
  }
}

const rows = []
for (const layout of ['previous', 'buckets, one call per play', 'buckets', 'buckets, g-1 full'] as const)
  rows.push(await run(layout))

console.log(`\none item, ${VIEWERS} new viewers then ${VIEWERS} repeats, ${INFLIGHT} in flight\n`)
console.log(
  '| layout | counted | repeats counted | dedupe keys | B / counted play (MEMORY USAGE) | B / counted play (used_memory) | largest key (B) | Redis µs / new play | Redis µs / repeat | server CPU µs / new play, / repeat | new plays/s | slowest command (µs) |',
)
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|')
for (const r of rows) {
  console.log(
    `| ${r.layout} | ${r.counted} | ${r.repeatsCounted} | ${r.dedupeKeys} | ${r.bytesPerCountedPlay} | ${r.allBytesPerCountedPlay} | ${r.largestKeyBytes} | ${r.usecPerNewPlay} | ${r.usecPerRepeat} | ${r.serverCpuUsPerNewPlay}, ${r.serverCpuUsPerRepeat} | ${r.newPlaysPerSecond} | ${r.slowestUs} ${r.slowestCommand} (${r.commandsOver100us} over ${SLOWLOG_US} µs) |`,
  )
}
const single = rows[1]!
const batched = rows[2]!
console.log(
  `\nbatched / one call per play, Redis µs per new play: ${(batched.usecPerNewPlay / single.usecPerNewPlay).toFixed(2)}, per repeat: ${(batched.usecPerRepeat / single.usecPerRepeat).toFixed(2)}; server CPU per new play: ${(batched.serverCpuUsPerNewPlay / single.serverCpuUsPerNewPlay).toFixed(2)}`,
)
mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
writeFileSync(
  new URL('../results/viral-plays.json', import.meta.url),
  `${JSON.stringify({ viewers: VIEWERS, inflight: INFLIGHT, rows }, null, 2)}\n`,
)
