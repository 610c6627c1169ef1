import type { BurstReport, BurstSpec } from '../workers/burst_client.js'
import { startCpuHog } from './cpu_hog.js'
import { runWorker } from './workers.js'

export type { BurstReport, BurstSpec }

const client = new URL('../workers/burst_client.ts', import.meta.url)

/**
 * Fires `spec` from a separate client process (test/workers/burst_client.ts) while a CPU hog keeps
 * one core busy; `onStarted` runs when the client's first requests go out. The hog is killed
 * whatever happens.
 * @throws when the client reports no result (it crashed).
 */
export async function runBurst(spec: BurstSpec, onStarted?: () => void): Promise<BurstReport> {
  const hog = startCpuHog()
  try {
    const reports = await runWorker(client, [JSON.stringify(spec)], (m) => {
      if (m.event === 'started') onStarted?.()
    })
    const done = reports.find((m) => m.event === 'done')
    if (!done) throw new Error(`burst client reported no result: ${JSON.stringify(reports)}`)
    return done as unknown as BurstReport
  } finally {
    await hog.stop()
  }
}
