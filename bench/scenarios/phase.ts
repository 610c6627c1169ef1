import { zipfSampler } from '../support/zipf.js'
import { type Context, randomIp } from './context.js'
import { burst, type LoadOptions, load } from './load.js'
import { bucketDelta, counterDelta, scrape } from './metrics.js'
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
  /** Per second: `flushLagS` (oldest unflushed interaction event, s), `eventLoopMaxS` (longest event-loop delay of any instance, s). */
  samples: Array<Record<string, number>>
  durationS: number
  /** Wall time (s) the traffic took: below durationS when a class's `amount` was answered sooner. */
  elapsedS: number
  /** Longest event-loop delay (s) of any instance during the phase, the last partial second included. */
  eventLoopMaxS: number
  /** CPU (s, user + system) the mode's instances used during the phase. */
  serviceCpuS: number
  /** Server-side latency of `GET /videos/:id` during the phase (video-api's own histogram). */
  serverVideoReads: ReturnType<typeof bucketDelta>
  /** floodgate's counters that grew during the phase (cache outcomes, stale counts reads, …), summed over instances. */
  floodgateEvents: Record<string, number>
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
  const first = await scrape(d.bases)
  const start = first.dbQueries
  const dbPerSecond: number[] = []
  const samples: Array<Record<string, number>> = []
  let last = start
  let sampling = true
  let stopSampling = () => {}
  const stopped = new Promise<void>((resolve) => {
    stopSampling = resolve
  })
  const sampler = (async () => {
    for (let s = 1; sampling; s++) {
      // the last partial second is not sampled: stop waiting for it as soon as the load is over
      await Promise.race([sleep(Math.max(0, t0 + s * 1000 - performance.now())), stopped])
      if (!sampling) break
      const now = await scrape(d.bases)
      // An instance that missed a scrape (e.g. busy) would read as a drop: never count below zero.
      dbPerSecond.push(Math.max(0, now.dbQueries - last))
      samples.push({ flushLagS: now.flushLagS, eventLoopMaxS: now.eventLoopMaxS })
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
  const elapsedS = (performance.now() - t0) / 1000
  sampling = false
  stopSampling()
  await sampler
  const end = await scrape(d.bases)
  return {
    recorders,
    dbPerSecond,
    dbTotal: end.dbQueries - start,
    samples,
    durationS: options.durationS,
    elapsedS,
    eventLoopMaxS: Math.max(end.eventLoopMaxS, ...samples.map((s) => s.eventLoopMaxS ?? 0)),
    serviceCpuS: end.cpuS - first.cpuS,
    serverVideoReads: bucketDelta(first.videoReadBuckets, end.videoReadBuckets),
    floodgateEvents: counterDelta(first.floodgateCounters, end.floodgateCounters),
  }
}

/** When the warm-up ran, in seconds relative to the start of the reads (negative: before). */
export interface WarmTiming {
  /** The first warm burst (`warmPaths`) started and ended. */
  warmStartS: number
  warmEndS: number
  /** The tail burst started and ended (= warmEndS without one). */
  tailStartS: number
  tailEndS: number
  /** Tail paths requested (the tail burst stops at its deadline). */
  tailSent: number
}

/**
 * Shared expiry set-up: the mode's cache is emptied and `warmPaths` are requested in one burst
 * (so their entries share one write time). With `tail`, its paths are requested in a second burst
 * from `startS` to at most `endS` after the first burst started, in their order (the burst stops
 * at `endS`, so a slow machine warms fewer). The reads start `leadS` after the first burst
 * started (or when the bursts are done, if later): one traffic class `read` of anonymous GETs
 * (random addresses) of videos drawn Zipf(s=1) over `ctx.idsByRank` at `params.readRate` for
 * `durationS` (s); `during()` runs alongside (outages). With `warm: false` nothing is warmed or
 * awaited (no cache to warm): the reads start at once.
 */
export async function warmThenZipfReads(
  ctx: Context,
  d: ModeDeployment,
  options: {
    warmPaths: readonly string[]
    tail?: { paths: readonly string[]; startS: number; endS: number }
    leadS?: number
    warm?: boolean
    durationS: number
    during?: () => Promise<void>
  },
): Promise<PhaseResult & { warm: WarmTiming }> {
  const rank = zipfSampler(ctx.idsByRank.length)
  await d.clearCache()
  const warmStart = performance.now()
  let warmEnd = warmStart
  let tailStart = warmStart
  let tailEnd = warmStart
  let tailSent = 0
  if (options.warm !== false) {
    let { failed } = await burst(d.bases, options.warmPaths, 32)
    warmEnd = tailStart = tailEnd = performance.now()
    const tail = options.tail
    if (tail) {
      await sleep(warmStart + tail.startS * 1000 - performance.now())
      tailStart = performance.now()
      const t = await burst(d.bases, tail.paths, 32, warmStart + tail.endS * 1000)
      tailEnd = performance.now()
      failed += t.failed
      tailSent = t.sent
    }
    if (failed > 0) ctx.log(`  warning: ${failed} warm-up requests failed`)
    await sleep(warmStart + (options.leadS ?? 0) * 1000 - performance.now())
  }
  const readStart = performance.now()
  const phase = await runPhase(d, {
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
  const s = (t: number) => Math.round((t - readStart) / 100) / 10
  return {
    ...phase,
    warm: {
      warmStartS: s(warmStart),
      warmEndS: s(warmEnd),
      tailStartS: s(tailStart),
      tailEndS: s(tailEnd),
      tailSent,
    },
  }
}
