import { zipfSampler } from '../support/zipf.js'
import { type Context, randomIp } from './context.js'
import { burst, type LoadOptions, load } from './load.js'
import { scrape } from './metrics.js'
import type { ModeDeployment } from './modes.js'
import { sleep } from './processes.js'
import { Recorder } from './recorder.js'

export interface TrafficClass extends Omit<LoadOptions, 'bases' | 'recorder'> {
  name: string
  /** Start this class after `delayS` seconds of the phase. @default 0 */
  delayS?: number
}

export interface PhaseResult {
  recorders: Record<string, Recorder>
  /** DB queries in each second of the phase. */
  dbPerSecond: number[]
  /** DB queries during the phase (sum of the instances' `db_queries_total`). */
  dbTotal: number
  /** Per second: `flushLagS` (oldest unflushed interaction event, s). */
  samples: Array<Record<string, number>>
  durationS: number
}

/**
 * Runs traffic classes side by side against one mode for `durationS`, scraping the instances'
 * /metrics every second (DB queries, flush lag); `during()` runs alongside (outages).
 */
export async function runPhase(
  d: ModeDeployment,
  options: {
    durationS: number
    classes: TrafficClass[]
    during?: () => Promise<void>
  },
): Promise<PhaseResult> {
  const t0 = performance.now()
  const recorders: Record<string, Recorder> = {}
  const start = (await scrape(d.bases)).dbQueries
  const dbPerSecond: number[] = []
  const samples: Array<Record<string, number>> = []
  let last = start
  let sampling = true
  const sampler = (async () => {
    for (let s = 1; sampling; s++) {
      await sleep(Math.max(0, t0 + s * 1000 - performance.now()))
      if (!sampling) break
      const now = await scrape(d.bases)
      // An instance that missed a scrape (e.g. busy) would read as a drop: never count below zero.
      dbPerSecond.push(Math.max(0, now.dbQueries - last))
      samples.push({ flushLagS: now.flushLagS })
      last = Math.max(last, now.dbQueries)
    }
  })()
  await Promise.all([
    ...options.classes.map(async (c) => {
      const recorder = new Recorder(t0)
      recorders[c.name] = recorder
      if (c.delayS) await sleep(c.delayS * 1000)
      await load({ ...c, durationS: c.durationS - (c.delayS ?? 0), bases: d.bases, recorder })
    }),
    options.during?.(),
  ])
  sampling = false
  await sampler
  const dbTotal = (await scrape(d.bases)).dbQueries - start
  return { recorders, dbPerSecond, dbTotal, samples, durationS: options.durationS }
}

/**
 * Shared expiry set-up: the mode's cache is emptied, `warmPaths` are requested in one burst (so
 * their entries share one write time), then one traffic class `read` of anonymous GETs
 * (random addresses) of videos drawn Zipf(s=1) over `ctx.idsByRank` runs at `params.readRate`
 * for `durationS` (s); `during()` runs alongside (outages).
 */
export async function warmThenZipfReads(
  ctx: Context,
  d: ModeDeployment,
  options: { warmPaths: readonly string[]; durationS: number; during?: () => Promise<void> },
): Promise<PhaseResult> {
  const rank = zipfSampler(ctx.idsByRank.length)
  await d.clearCache()
  const warmFailed = await burst(d.bases, options.warmPaths, 32)
  if (warmFailed > 0) ctx.log(`  warning: ${warmFailed} warm-up requests failed`)
  return runPhase(d, {
    durationS: options.durationS,
    classes: [
      {
        name: 'read',
        connections: ctx.params.connections,
        durationS: options.durationS,
        rate: ctx.params.readRate,
        next: () => ({
          method: 'GET',
          path: `/videos/${ctx.idsByRank[rank()]}`,
          headers: { 'x-forwarded-for': randomIp() },
        }),
      },
    ],
    ...(options.during ? { during: options.during } : {}),
  })
}
