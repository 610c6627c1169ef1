import type { Context } from './context.js'
import { warmThenZipfReads } from './phase.js'
import {
  answeredOk,
  byMode,
  dbSeries,
  forEachMode,
  latencyLine,
  modeSeries,
  no5xx,
  perSecond,
  type Scenario,
  summarize,
} from './scenario.js'

/**
 * Hot key expiry storm: the cache is emptied, the hottest keys are cached at the same
 * moment (one burst), then a Zipf(s=1) read mix over the whole catalog runs from every
 * instance past the TTL, so the hottest keys all reach their expiry together.
 */
export const hotKeyExpiry: Scenario = {
  id: 'hot-key-expiry',
  async run(ctx: Context) {
    const p = ctx.params
    const hot = ctx.idsByRank.slice(0, p.hotKeys).map((id) => `/videos/${id}`)
    const phases = await forEachMode(ctx, 'hot key expiry', (mode) =>
      warmThenZipfReads(ctx, ctx.deployments[mode], { warmPaths: hot, durationS: p.hotKeyS }),
    )
    const rows = byMode((m) => {
      const r = phases[m].recorders.read!
      const pc = r.percentiles()
      return [
        phases[m].dbTotal,
        perSecond(phases[m].dbTotal, p.hotKeyS),
        Math.max(0, ...phases[m].dbPerSecond),
        perSecond(r.requests, p.hotKeyS),
        pc.p50,
        pc.p99,
        pc.p999,
        r.total.serverErrors + r.total.errors,
      ]
    })
    const of = (key: 'p50' | 'p99' | 'p999') => byMode((m) => latencyLine(phases[m], 'read', key))
    return {
      id: this.id,
      title: 'Hot key expiry storm',
      description:
        `Cache emptied, the ${p.hotKeys} hottest videos cached in one burst at t≈0, then a Zipf(s=1) ` +
        `read mix over ${ctx.idsByRank.length} videos at ${p.readRate} req/s from ${p.instances} instances for ` +
        `${p.hotKeyS} s. TTL: older design ${p.ttlMs / 1000} s fixed (all hot keys expire together at ` +
        `t≈${p.ttlMs / 1000} s); floodgate ${p.ttlMs / 1000}–${(2 * p.ttlMs) / 1000} s jittered, plus SWR and L1.`,
      columns: [
        'DB queries',
        'DB q/s (mean)',
        'DB q/s (peak)',
        'req/s',
        'p50 ms',
        'p99 ms',
        'p99.9 ms',
        '5xx+errors',
      ],
      rows,
      chart: {
        title: 'Hot key expiry storm',
        xLabel: 'seconds',
        markers: [{ x: p.ttlMs / 1000, label: 'TTL of the hot keys' }],
        panels: [
          {
            title: 'DB queries per second',
            yLabel: 'queries/s',
            series: dbSeries(phases),
          },
          { title: 'Latency p50', yLabel: 'ms', logY: true, series: modeSeries(of('p50')) },
          { title: 'Latency p99', yLabel: 'ms', logY: true, series: modeSeries(of('p99')) },
          { title: 'Latency p99.9', yLabel: 'ms', logY: true, series: modeSeries(of('p999')) },
        ],
      },
      invariants: [no5xx(phases), answeredOk(phases)],
      raw: byMode((m) => summarize(phases[m])),
    }
  },
}
