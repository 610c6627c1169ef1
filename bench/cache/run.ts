// Cache benchmarks, floodgate side by side with bentocache and cache-manager
// (and the older 50 ms polling-lock design) in one run, against the local Redis.
//   node --conditions=floodgate-source --import tsx bench/cache/run.ts [--quick] [--throughput-only]
// (--throughput-only: the cached-read table alone, written to bench/results/cache-throughput.json)
// Prints markdown tables and writes bench/results/cache.json.
//
// The throughput table pairs like with like. Every adapter runs 32 gets in flight on the same
// warmed keys and values (a video row, ~100 bytes), one Redis connection each. node-redis (under
// cache-manager's @keyv/redis) writes every command queued in one tick in one socket write, as
// ioredis does only with `enableAutoPipelining`: so floodgate's ratio to a peer is taken against
// the floodgate variant whose client batches writes the same way (column "batched writes"), and
// the raw ioredis `GET` + `JSON.parse` floor runs in both modes. cache-manager's `wrap` also
// coalesces concurrent calls of one key, hits included: under Zipf(1) part of its gets send no
// GET at all (column "Redis commands / op"); so do floodgate's (L2Store.readShared); the raw loop sends one per get.
// Earlier runs set floodgate without auto-pipelining against cache-manager (batched) and the raw
// loop (not batched) as if all three were one kind.
import { randomBytes } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { Redis } from 'ioredis'
import { type AdapterKind, batchesWrites, REDIS_URL } from './adapters.js'
import { measurePenetration } from './penetration.js'
import { measureStampede } from './stampede.js'
import { measureThroughput } from './throughput.js'

const quick = process.argv.includes('--quick')
const throughputOnly = process.argv.includes('--throughput-only')
const runId = randomBytes(3).toString('hex')
const prefixFor = (label: string) => `fgbench:${runId}:${label}`
const keys = 10_000
const durationMs = quick ? 1000 : 3000

function table(headers: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n')
}

const results: Record<string, unknown> = {
  runAt: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  keys,
  zipfS: 1,
}

// 1. Cached-read throughput, L1 hits and L2 hits. The machine is shared: rounds
// interleave the libraries (rotating order) and the median round is reported.
const rounds = quick ? 1 : 3
const throughput: ({ tier: string } & Awaited<ReturnType<typeof measureThroughput>>)[] = []
for (const [tier, kinds] of [
  ['L1 hit', ['floodgate', 'bentocache', 'cache-manager']],
  [
    'L2 hit',
    [
      'floodgate-l2',
      'floodgate-l2-autopipelining',
      'bentocache-l2',
      'cache-manager-l2',
      'ioredis-get',
      'ioredis-get-autopipelining',
    ],
  ],
] as const) {
  const samples = new Map<AdapterKind, Awaited<ReturnType<typeof measureThroughput>>[]>()
  for (let round = 0; round < rounds; round++) {
    const order = [...kinds.slice(round % kinds.length), ...kinds.slice(0, round % kinds.length)]
    for (const kind of order as AdapterKind[]) {
      const r = await measureThroughput(kind, prefixFor(`tp-${kind}-${round}`), keys, durationMs)
      samples.set(kind, [...(samples.get(kind) ?? []), r])
      console.error(
        `throughput ${tier} ${kind} round ${round}: ${r.opsPerSec} ops/s, ${r.cpuUsPerOp} µs CPU/op`,
      )
    }
  }
  for (const kind of kinds) {
    const sorted = [...(samples.get(kind) ?? [])].sort((a, b) => a.opsPerSec - b.opsPerSec)
    throughput.push({ tier, ...sorted[Math.floor(sorted.length / 2)]! })
  }
}
// floodgate's row of the tier whose client batches writes as `kind`'s does
const ours = (tier: string, kind: AdapterKind) =>
  throughput.find(
    (r) => r.tier === tier && r.kind.startsWith('floodgate') && batchesWrites(r.kind) === batchesWrites(kind),
  )?.opsPerSec ?? throughput.find((r) => r.tier === tier && r.kind.startsWith('floodgate'))!.opsPerSec
results.throughput = throughput.map((r) => ({
  ...r,
  batchedWrites: batchesWrites(r.kind),
  floodgateRatio: +(ours(r.tier, r.kind) / r.opsPerSec).toFixed(2),
}))
console.log(
  `\n### Cached getOrLoad throughput (Zipf(1) over ${keys} keys, 32 in flight, median of ${rounds} interleaved rounds of ${durationMs} ms; floodgate ÷ this: against the floodgate row with the same batched writes)\n`,
)
console.log(
  table(
    [
      'tier',
      'library',
      'batched writes',
      'ops/s',
      'floodgate ÷ this',
      'CPU µs / op',
      'Redis commands / op',
      'round trips / op',
      'loads after warm-up',
    ],
    (
      results.throughput as ((typeof throughput)[number] & {
        floodgateRatio: number
        batchedWrites: boolean
      })[]
    ).map((r) => [
      r.tier,
      r.kind,
      r.batchedWrites ? 'yes' : 'no',
      r.opsPerSec,
      r.floodgateRatio,
      r.cpuUsPerOp,
      r.redisCommandsPerOp,
      r.roundTripsPerOp,
      r.loadsAfterWarmup,
    ]),
  ),
)

if (!throughputOnly) {
  // 2. Multi-process stampede.
  const stampedeOptions = { processes: 4, callers: 100, loaderMs: 100, rounds: quick ? 2 : 5 }
  const stampede: Awaited<ReturnType<typeof measureStampede>>[] = []
  for (const kind of ['floodgate', 'bentocache', 'cache-manager', 'polling-lock'] as const) {
    const r = await measureStampede(kind, prefixFor(`st-${kind}`), stampedeOptions)
    stampede.push(r)
    console.error(`stampede ${kind}: ${JSON.stringify(r)}`)
  }
  results.stampede = { options: stampedeOptions, rows: stampede }
  console.log(
    `\n### Stampede: ${stampedeOptions.processes} processes × ${stampedeOptions.callers} callers on one cold key, loader ${stampedeOptions.loaderMs} ms, ${stampedeOptions.rounds} rounds\n`,
  )
  console.log(
    table(
      ['library', 'loader calls / round', 'caller p50 ms', 'caller p99 ms', 'max ms'],
      stampede.map((r) => [r.kind, r.loaderCallsPerRound, r.p50Ms, r.p99Ms, r.maxMs]),
    ),
  )

  // 3. Penetration by random missing ids.
  const penetrationOptions = { requests: 10_000, distinct: 2_000, catalog: 10_000 }
  const penetration: Awaited<ReturnType<typeof measurePenetration>>[] = []
  for (const kind of [
    'floodgate',
    'floodgate+bloom',
    'bentocache',
    'cache-manager',
    'polling-lock',
  ] as const) {
    const r = await measurePenetration(kind, prefixFor(`pen-${kind.replace('+', '-')}`), penetrationOptions)
    penetration.push(r)
    console.error(`penetration ${kind}: ${JSON.stringify(r)}`)
  }
  results.penetration = { options: penetrationOptions, rows: penetration }
  console.log(
    `\n### Penetration: ${penetrationOptions.requests} requests over ${penetrationOptions.distinct} random missing ids\n`,
  )
  console.log(
    table(
      ['library', 'DB calls', 'keys written', 'elapsed ms'],
      penetration.map((r) => [r.kind, r.dbCalls, r.keysWritten, r.elapsedMs]),
    ),
  )
}

mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
const file = throughputOnly ? 'cache-throughput.json' : 'cache.json'
writeFileSync(new URL(`../results/${file}`, import.meta.url), `${JSON.stringify(results, null, 2)}\n`)

// Clean up every key of this run.
const redis = new Redis(REDIS_URL)
let cursor = '0'
do {
  const [next, found] = await redis.scan(cursor, 'MATCH', `*fgbench:${runId}*`, 'COUNT', 5000)
  cursor = next
  if (found.length > 0) await redis.unlink(...found)
} while (cursor !== '0')
redis.disconnect()
process.exit(0)
