// Bloom filter benchmark: floodgate's BloomFilter (one Lua call per shard per
// batch) side by side with a bare baseline (a pipeline of k SETBIT / GETBIT per
// item, the textbook Redis-bitmap filter), plus the hash functions alone.
//   node --conditions=floodgate-source --import tsx bench/bloom/run.ts [--quick]
// Needs the local Redis (REDIS_URL, default redis://127.0.0.1:6379). Prints markdown tables.
import { createHash, randomBytes } from 'node:crypto'
import { cpus } from 'node:os'
import { BitPositions, BloomFilter, bloomSize, KeySpace } from 'floodgate'
import { Redis } from 'ioredis'

const quick = process.argv.includes('--quick')
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
const keySpace = new KeySpace(`fgbench:bloom:${randomBytes(3).toString('hex')}`)
const n = quick ? 50_000 : 200_000
const batch = 1000
const { bits, hashes } = bloomSize(1_000_000, 0.01)

function table(headers: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n')
}
const rate = (count: number, ms: number) => Math.round((count / ms) * 1000)
const items = (label: string, count: number) => Array.from({ length: count }, (_, i) => `${label}:${i}`)

// 1. Hashing alone: items/s for the 128-bit hash that feeds double hashing.
const sample = items('video', 200_000)
const positions = new BitPositions(Math.ceil(bits / 2), hashes, 2)
const hashRows: (string | number)[][] = []
for (const [name, fn] of [
  ['murmur3 x86_128 (floodgate, TS) + k offsets', (s: string) => positions.of(s)],
  ['node:crypto md5', (s: string) => createHash('md5').update(s).digest()],
  ['node:crypto sha1', (s: string) => createHash('sha1').update(s).digest()],
] as const) {
  for (const s of sample.slice(0, 10_000)) fn(s) // warm up
  const start = performance.now()
  for (const s of sample) fn(s)
  hashRows.push([name, rate(sample.length, performance.now() - start)])
}

// 2. Through Redis: adds and checks in batches of `batch` items, one batch in flight.
async function timeBatches(all: readonly string[], run: (chunk: string[]) => Promise<unknown>) {
  const start = performance.now()
  for (let i = 0; i < all.length; i += batch) await run(all.slice(i, i + batch))
  return rate(all.length, performance.now() - start)
}

const bloom = new BloomFilter({ redis, keySpace, name: 'bench', bits, hashes })
await bloom.rebuild((async function* () {})())
const present = items('present', n)
const absent = items('absent', n)
const fgAdd = await timeBatches(present, (c) => bloom.add(c))
const fgCheckPresent = await timeBatches(present, (c) => bloom.mightContain(c))
const fgCheckAbsent = await timeBatches(absent, (c) => bloom.mightContain(c))

// baseline: same bits and hashes, one key, k SETBIT/GETBIT per item in a pipeline
const baseKey = keySpace.plain('baseline', 'bits')
const basePositions = new BitPositions(bits, hashes, 1)
const baseAdd = await timeBatches(present, async (c) => {
  const pipeline = redis.pipeline()
  for (const item of c) for (const o of basePositions.of(item).offsets) pipeline.setbit(baseKey, o, 1)
  await pipeline.exec()
})
const baseCheck = (c: string[]) => {
  const pipeline = redis.pipeline()
  for (const item of c) for (const o of basePositions.of(item).offsets) pipeline.getbit(baseKey, o)
  return pipeline.exec()
}
const baseCheckPresent = await timeBatches(present, baseCheck)
const baseCheckAbsent = await timeBatches(absent, baseCheck)

// single-item checks, one in flight: round-trip bound. floodgate sends two commands per
// query (the generation pointer read that rules out false negatives during a rebuild,
// and the check script), in one flight; the baseline sends k GETBITs in one flight.
const singles = absent.slice(0, quick ? 2000 : 10_000)
let start = performance.now()
for (const s of singles) await bloom.mightContainOne(s)
const fgSingle = rate(singles.length, performance.now() - start)
start = performance.now()
for (const s of singles) await baseCheck([s])
const baseSingle = rate(singles.length, performance.now() - start)

const falsePositives = (await bloom.mightContain(absent)).filter(Boolean).length

console.log(
  `\nmachine: ${cpus().length} CPUs, Node ${process.version}; m = ${bits} bits, k = ${hashes}, n = ${n}`,
)
console.log('\n### Hashing (items/s)\n')
console.log(table(['hash', 'items/s'], hashRows))
console.log(`\n### Redis, batches of ${batch} items, one batch in flight (items/s)\n`)
const row = (op: string, fg: number, base: number) => [op, fg, base, (fg / base).toFixed(2)]
console.log(
  table(
    ['operation', 'floodgate BloomFilter', 'baseline pipeline SETBIT/GETBIT', 'ratio'],
    [
      row('add', fgAdd, baseAdd),
      row('check (present)', fgCheckPresent, baseCheckPresent),
      row('check (absent)', fgCheckAbsent, baseCheckAbsent),
      row('check, single item', fgSingle, baseSingle),
    ],
  ),
)
console.log(`\nmeasured false-positive rate at ${n} of 1,000,000 items: ${(falsePositives / n).toFixed(5)}`)

let cursor = '0'
do {
  const [next, keys] = await redis.scan(cursor, 'MATCH', `${keySpace.prefix}*`, 'COUNT', 1000)
  cursor = next
  if (keys.length > 0) await redis.unlink(...keys)
} while (cursor !== '0')
redis.disconnect()
