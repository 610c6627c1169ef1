import type { BurstReport, BurstSpec } from '../workers/burst_client.js'
import { startCpuHog } from './cpu_hog.js'
import { runWorker } from './workers.js'

export type { BurstReport, BurstSpec }

const client = new URL('../workers/burst_client.ts', import.meta.url)

/** Source addresses handed out so far in this process: each burst spreads over fresh ones. */
let sourcesUsed = 0

/**
 * Fires `spec` from a separate client process (test/workers/burst_client.ts) while a CPU hog keeps
 * one core busy (unless `cpuHog` is false); `onStarted` runs when the client's first requests go
 * out. The hog is killed whatever happens. With `spreadSources`, no two bursts of one test file
 * share a source address, so the per-IP quota of one burst never carries into the next.
 * @throws when the client reports no result (it crashed).
 */
export async function runBurst(spec: BurstSpec, onStarted?: () => void, cpuHog = true): Promise<BurstReport> {
  const hog = cpuHog ? startCpuHog() : undefined
  const firstSource = sourcesUsed
  if (spec.spreadSources) sourcesUsed += spec.concurrency
  try {
    const reports = await runWorker(client, [JSON.stringify({ firstSource, ...spec })], (m) => {
      if (m.event === 'started') onStarted?.()
    })
    const done = reports.find((m) => m.event === 'done')
    if (!done) throw new Error(`burst client reported no result: ${JSON.stringify(reports)}`)
    return done as unknown as BurstReport
  } finally {
    await hog?.stop()
  }
}
