import type { Context } from './context.js'
import type { ModeName } from './modes.js'
import { warmThenZipfReads } from './phase.js'
import { newHistogram, percentilesOf } from './recorder.js'
import {
  answeredOk,
  byMode,
  cpuMsPerRequest,
  dbSeries,
  forEachMode,
  latencyLine,
  modeSeries,
  no5xx,
  perSecond,
  type Scenario,
  summarize,
} from './scenario.js'
import { MEASURED_TAIL_COLUMNS, measuredTail, readTailInvariant } from './tail.js'

/** Seconds of the reads that make "around the TTL": one before the hot keys' expiry, three after. */
const AROUND = { beforeS: 1, afterS: 3 } as const

/**
 * Hot key expiry storm: the cache is emptied; the `hotKeys` hottest videos are cached in one burst
 * (one write time, so with a fixed TTL they expire together); `hotAfterS` later the long tail
 * (ranks up to `hotTailWarm`, hottest first) in a second burst that stops 0.5 s before the reads
 * start (a slow machine warms fewer; the table says how many). Without that tail, ~30% of Zipf(1)
 * reads over 100k ids are cold misses in every design and drown the storm. The reads (Zipf(s=1)
 * over the whole catalog, every instance) start `hotLeadS` after the hot burst and end `hotAfterS`
 * past the hot keys' TTL, before any tail entry's fixed TTL. No cache: no warm-up, the same reads.
 */
export const hotKeyExpiry: Scenario = {
  id: 'hot-key-expiry',
  async run(ctx: Context) {
    const p = ctx.params
    const paths = (from: number, to: number) => ctx.idsByRank.slice(from, to).map((id) => `/videos/${id}`)
    const hot = paths(0, p.hotKeys)
    const tail = paths(p.hotKeys, p.hotTailWarm)
    const ttlS = p.ttlMs / 1000
    // the reads end hotAfterS past the hot keys' expiry; the tail is written hotAfterS after them, so
    // (fixed TTL) none of its entries expires while the reads run
    const durationS = ttlS - p.hotLeadS + p.hotAfterS
    const phases = await forEachMode(ctx, 'hot key expiry', (mode) =>
      warmThenZipfReads(ctx, ctx.deployments[mode], {
        warmPaths: hot,
        tail: { paths: tail, startS: p.hotAfterS, endS: p.hotLeadS - 0.5 },
        leadS: p.hotLeadS,
        warm: mode !== 'none',
        durationS,
      }),
    )
    // the hot keys' fixed-TTL expiry, in seconds of the reads (the older design's; floodgate's are
    // drawn from [TTL, 2 × TTL] after the same burst)
    const expiryS = (m: ModeName) => p.ttlMs / 1000 + phases[m].warm.warmStartS
    const markerS = expiryS('legacy')
    const window = (m: ModeName) => {
      const from = Math.max(0, Math.floor(expiryS(m) - AROUND.beforeS))
      return { from, to: Math.floor(expiryS(m) + AROUND.afterS) }
    }
    const around = (m: ModeName) => {
      // no cache has no TTL: the same seconds as the older design's
      const { from, to } = window(m === 'none' ? 'legacy' : m)
      const h = newHistogram()
      for (const s of phases[m].recorders.read!.seconds.slice(from, to + 1)) h.add(s.histogram)
      const db = phases[m].dbPerSecond
      const before = db.slice(1, from)
      return {
        dbBefore: perSecond(
          before.reduce((a, b) => a + b, 0),
          before.length,
        ),
        dbPeak: Math.max(0, ...db.slice(from, to + 1)),
        p999: percentilesOf(h).p999,
      }
    }
    const tailWarmed = (m: ModeName) => phases[m].warm.tailSent
    const rows = byMode((m) => {
      const r = phases[m].recorders.read!
      const pc = r.percentiles()
      const a = around(m)
      return [
        m === 'none' ? '–' : p.hotKeys + tailWarmed(m),
        a.dbBefore,
        a.dbPeak,
        a.p999,
        phases[m].dbTotal,
        perSecond(r.requests, durationS),
        pc.p50,
        pc.p99,
        pc.p999,
        ...measuredTail(phases[m], 'read'),
        r.total.serverErrors + r.total.errors,
        cpuMsPerRequest(phases[m]),
      ]
    })
    const of = (key: 'p50' | 'p99' | 'p999') => byMode((m) => latencyLine(phases[m], 'read', key))
    return {
      id: this.id,
      title: 'Hot key expiry storm',
      description:
        `Cache emptied; the ${p.hotKeys} hottest videos cached in one burst (one write time); ${p.hotAfterS} s later ` +
        `ranks ${p.hotKeys + 1}–${p.hotTailWarm}, hottest first, in a second burst that stops 0.5 s before the reads ` +
        '(so most reads hit a warm cache and the tail’s entries outlive the reads; "videos warmed" says how far it ' +
        `got). Zipf(s=1) reads over ${ctx.idsByRank.length} videos at ${p.readRate} ` +
        `req/s from ${p.instances} instances start ${p.hotLeadS} s after the hot burst and run ${durationS.toFixed(1)} s: the hot ` +
        `keys' TTL runs out at t≈${markerS.toFixed(1)} s (their burst took ${(phases.legacy.warm.warmEndS - phases.legacy.warm.warmStartS).toFixed(1)} s here, so they expire over as long). TTL: older design ${ttlS} s fixed (the hot keys expire ` +
        `together); floodgate ${ttlS}–${2 * ttlS} s jittered, stale-while-revalidate and L1. No cache: the same ` +
        `reads, nothing to warm. "Around the TTL" = seconds ${AROUND.beforeS} before to ${AROUND.afterS} after it; ` +
        '"before" = the seconds from 1 s into the reads up to then.',
      columns: [
        'videos warmed',
        'DB q/s before TTL',
        'DB q/s peak at TTL',
        'p99.9 ms at TTL',
        'DB queries',
        'req/s',
        'p50 ms',
        'p99 ms',
        'p99.9 ms',
        ...MEASURED_TAIL_COLUMNS,
        '5xx+errors',
        'service CPU ms/req',
      ],
      rows,
      chart: {
        title: 'Hot key expiry storm',
        xLabel: 'seconds',
        markers: [{ x: markerS, label: 'TTL of the hot keys' }],
        panels: [
          { title: 'DB queries per second', yLabel: 'queries/s', series: dbSeries(phases) },
          { title: 'Latency p50', yLabel: 'ms', logY: true, series: modeSeries(of('p50')) },
          { title: 'Latency p99', yLabel: 'ms', logY: true, series: modeSeries(of('p99')) },
          { title: 'Latency p99.9', yLabel: 'ms', logY: true, series: modeSeries(of('p999')) },
        ],
      },
      invariants: [no5xx(phases), answeredOk(phases), readTailInvariant(phases, 'read', 'reads')],
      raw: byMode((m) => ({
        warm: phases[m].warm,
        hotExpiryS: m === 'none' ? null : expiryS(m),
        around: window(m === 'none' ? 'legacy' : m),
        ...(summarize(phases[m]) as object),
      })),
    }
  },
}
