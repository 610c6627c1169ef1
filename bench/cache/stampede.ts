import { Redis } from 'ioredis'
import { spawnTs } from '../support/spawn_ts.js'
import { type AdapterKind, REDIS_URL } from './adapters.js'

/** Percentile (0–100) of an unsorted sample, nearest rank. */
function percentile(sample: readonly number[], p: number): number {
  if (sample.length === 0) return Number.NaN
  const sorted = [...sample].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

interface WorkerProcess {
  ready: Promise<void>
  result: Promise<number[]>
}

function spawnWorker(args: string[]): WorkerProcess {
  const child = spawnTs(new URL('./stampede_worker.ts', import.meta.url), args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  let buffer = ''
  let onReady: () => void = () => {}
  let onResult: (latencies: number[]) => void = () => {}
  child.stdout?.setEncoding('utf8')
  child.stdout?.on('data', (chunk: string) => {
    buffer += chunk
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const line = buffer.slice(0, nl)
      buffer = buffer.slice(nl + 1)
      if (!line.startsWith('{')) continue
      const message = JSON.parse(line) as { ready?: boolean; latencies?: number[] }
      if (message.ready) onReady()
      if (message.latencies) onResult(message.latencies)
    }
  })
  return {
    ready: new Promise((resolve) => {
      onReady = resolve
    }),
    result: new Promise((resolve, reject) => {
      onResult = resolve
      child.once('exit', (code) => {
        if (code !== 0) reject(new Error(`stampede worker exited with ${code}`))
      })
    }),
  }
}

/**
 * Multi-process stampede: `processes` × `callers` concurrent reads of one cold
 * key, loader `loaderMs` ms, repeated for `rounds` fresh keys. Loader calls are
 * counted in Redis across processes; latency is per caller.
 */
export async function measureStampede(
  kind: AdapterKind,
  prefix: string,
  options: { processes: number; callers: number; loaderMs: number; rounds: number },
) {
  const redis = new Redis(REDIS_URL)
  const latencies: number[] = []
  for (let round = 0; round < options.rounds; round++) {
    const workers = Array.from({ length: options.processes }, () =>
      spawnWorker([kind, prefix, `hot${round}`, String(options.callers), String(options.loaderMs)]),
    )
    await Promise.all(workers.map((w) => w.ready))
    await new Promise((resolve) => setTimeout(resolve, 200))
    await redis.publish(`${prefix}:go`, 'go')
    for (const sample of await Promise.all(workers.map((w) => w.result))) latencies.push(...sample)
  }
  const loads = Number(await redis.get(`${prefix}:loads`))
  redis.disconnect()
  return {
    kind,
    loaderCallsPerRound: loads / options.rounds,
    p50Ms: Math.round(percentile(latencies, 50)),
    p99Ms: Math.round(percentile(latencies, 99)),
    maxMs: Math.round(Math.max(...latencies)),
  }
}
