// The leased mode's two paths, this code against another floodgate (BENCH_BASELINE: its
// `src/index.ts`, e.g. from `git archive <commit> packages/floodgate | tar -x -C /tmp/base` plus a
// node_modules symlink), in one process and interleaved rounds, so both see the same machine noise:
//   BENCH_BASELINE=… node --conditions=floodgate-source --import tsx bench/ratelimit/leased_ab.ts <slice|renew> [ms per round] [rounds]
// slice: every key holds a slice first, every decision is answered from it; renew: lease.fraction
// 1e-9, every decision is a lease call (limit 1e9 in both, not the defaults, so that one path alone
// runs, as profile.ts's leased-slice / leased-renew). Prints each side's median decisions/s and
// client CPU µs/decision and the median of the per-round ratios. env: REDIS_URL, SWAP=1 (baseline first).
import { deleteByPrefix } from '@floodgate/test-support'
import * as current from 'floodgate'
import { median, Scenario } from './load.js'

const baselinePath = process.env.BENCH_BASELINE
if (!baselinePath) throw new Error('BENCH_BASELINE: the other floodgate src/index.ts')
const baseline = (await import(baselinePath)) as typeof current
const which = process.argv[2] === 'renew' ? 'renew' : 'slice'
const roundMs = Number(process.argv[3] ?? 500)
const rounds = Number(process.argv[4] ?? 8)
const redis = current.createRedisClient(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', {
  commandTimeoutMs: 5000,
})
await new Promise((resolve) => redis.once('ready', resolve))
const prefix = `bench:rlab:${process.pid}`
const keyOf = (i: number) => `user-${(i * 7919) % 10_000}`

const sides = process.env.SWAP
  ? ([
      ['baseline', baseline],
      ['current', current],
    ] as const)
  : ([
      ['current', current],
      ['baseline', baseline],
    ] as const)
const scenarios = new Map<string, Scenario>()
for (const [name, lib] of sides) {
  const limiter = lib.createRateLimiter({
    redis,
    prefix: new lib.KeySpace(prefix),
    name: `${name}-${which}`,
    algorithm: 'fixedWindow',
    limit: 1e9,
    windowMs: 60_000,
    timeoutMs: 5000,
    fallback: 'failClosed',
    mode: 'leased',
    ...(which === 'renew' ? { lease: { fraction: 1e-9 } } : {}),
  })
  if (which === 'slice') for (let i = 0; i < 10_000; i++) await limiter.limit(keyOf(i))
  const source = which === 'slice' ? 'lease' : 'redis'
  scenarios.set(
    name,
    new Scenario(name, async (i) => {
      const result = await limiter.limit(keyOf(i))
      if (result.source !== source) throw new Error(`decided by ${result.source}`)
    }),
  )
}
for (let round = 0; round < rounds; round++) {
  for (const scenario of scenarios.values()) {
    if (round === 0) await scenario.slice(64, 300, false)
    await scenario.slice(64, roundMs)
  }
}
const now = scenarios.get('current')!.result()
const before = scenarios.get('baseline')!.result()
const ratio = median(now.sliceOpsPerSec.map((ops, i) => ops / before.sliceOpsPerSec[i]!))
process.stdout.write(
  `${which}: current ${now.medianOpsPerSec}/s ${now.medianCpuUsPerOp} µs CPU (errors ${now.errors}), ` +
    `baseline ${before.medianOpsPerSec}/s ${before.medianCpuUsPerOp} µs CPU (errors ${before.errors}), ` +
    `current ÷ baseline ${ratio.toFixed(2)} (median of ${rounds} rounds)\n`,
)
await deleteByPrefix(redis, prefix)
process.exit(0)
