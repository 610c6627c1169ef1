import { dataSegmentsOut } from '../support/tcp_segments.js'
import { zipfSampler } from '../support/zipf.js'
import { type AdapterKind, makeAdapter, REDIS_URL } from './adapters.js'

/** A video-sized JSON value. */
export function videoRow(i: number) {
  return { id: i, authorId: i % 997, title: `video number ${i}`, durationS: 30 + (i % 90), private: false }
}

/**
 * Cached-read throughput (ops/s): warm every key, then `concurrency` loops of
 * Zipf(1)-sampled `get`s over `keys` keys for `durationMs` ms. The loader is
 * never expected to run after warm-up (counted as `loads`). `cpuUsPerOp`: this process's CPU time
 * (µs, user + system) per get, Redis' own excluded. `redisCommandsPerOp`: commands the adapter
 * sent per get (below 1 when it answers some gets without a read of their own);
 * `roundTripsPerOp`: this process's TCP data segments to Redis per get (one per socket write:
 * below `redisCommandsPerOp` when the client batches writes).
 */
export async function measureThroughput(
  kind: AdapterKind,
  prefix: string,
  keys: number,
  durationMs: number,
  concurrency = 32,
): Promise<{
  kind: AdapterKind
  opsPerSec: number
  cpuUsPerOp: number
  redisCommandsPerOp: number
  roundTripsPerOp: number
  loadsAfterWarmup: number
}> {
  const adapter = await makeAdapter(kind, prefix)
  let loads = 0
  const load = (i: number) => async () => {
    loads++
    return videoRow(i)
  }
  for (let start = 0; start < keys; start += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, keys - start) }, (_, j) =>
        adapter.get(`v${start + j}`, load(start + j)),
      ),
    )
  }
  loads = 0
  const sample = zipfSampler(keys)
  let ops = 0
  const stopAt = performance.now() + durationMs
  const started = performance.now()
  // CPU of this process (user + system, µs) per op: steadier than ops/s on a shared machine
  const cpu = process.cpuUsage()
  const redisPort = Number(new URL(REDIS_URL).port || 6379)
  const commands = adapter.commands()
  const segments = dataSegmentsOut(process.pid, redisPort)
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < stopAt) {
        for (let i = 0; i < 64; i++) {
          const r = sample()
          await adapter.get(`v${r}`, load(r))
          ops++
        }
      }
    }),
  )
  const elapsedS = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const cpuUsPerOp = +((used.user + used.system) / ops).toFixed(2)
  const redisCommandsPerOp = +((adapter.commands() - commands) / ops).toFixed(3)
  const roundTripsPerOp = +((dataSegmentsOut(process.pid, redisPort) - segments) / ops).toFixed(3)
  await adapter.close()
  return {
    kind,
    opsPerSec: Math.round(ops / elapsedS),
    cpuUsPerOp,
    redisCommandsPerOp,
    roundTripsPerOp,
    loadsAfterWarmup: loads,
  }
}
