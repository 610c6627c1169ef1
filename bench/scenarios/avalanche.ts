import type { Context } from './context.js'
import { MODE_LABEL, MODES } from './modes.js'
import { warmThenZipfReads } from './phase.js'
import { sleep } from './processes.js'
import {
  answeredOk,
  byMode,
  cpuMsPerRequest,
  dbSeries,
  forEachMode,
  latencyLine,
  modeSeries,
  perSecond,
  type Scenario,
  summarize,
} from './scenario.js'
import { MEASURED_TAIL_COLUMNS, measuredTail, readTailInvariant } from './tail.js'

/**
 * Avalanche: the cache is emptied and the top N videos are cached in one burst (so they share
 * one write time), then a Zipf(s=1) read mix runs past their TTL; mid-run the mode's Redis is
 * killed (SIGKILL, no persistence: it comes back empty) and restarted after the outage.
 */
export const avalanche: Scenario = {
  id: 'avalanche',
  async run(ctx: Context) {
    const p = ctx.params
    const warm = ctx.idsByRank.slice(0, p.avalancheWarm).map((id) => `/videos/${id}`)
    const downAt = p.redisDownAtS
    const upAt = p.redisDownAtS + p.redisDownS
    const phases = await forEachMode(ctx, 'avalanche', (mode) => {
      const d = ctx.deployments[mode]
      return warmThenZipfReads(ctx, d, {
        warmPaths: warm,
        durationS: p.avalancheS,
        during: async () => {
          await sleep(downAt * 1000)
          await d.redisServer.kill()
          await sleep(p.redisDownS * 1000)
          await d.redisServer.start()
        },
      })
    })
    const errorsPerSecond = byMode((m) =>
      (phases[m].recorders.read?.timeline() ?? []).map((s) =>
        s.requests ? (100 * s.errors) / s.requests : 0,
      ),
    )
    const rows = byMode((m) => {
      const r = phases[m].recorders.read!
      const pc = r.percentiles()
      const failed = r.total.serverErrors + r.total.errors
      const tl = r.timeline()
      const outside = tl.filter((s) => s.t < downAt || s.t > upAt + 2)
      const failedOutside = outside.reduce((n, s) => n + s.errors, 0)
      return [
        phases[m].dbTotal,
        perSecond(phases[m].dbTotal, p.avalancheS),
        Math.max(0, ...phases[m].dbPerSecond),
        perSecond(r.requests, p.avalancheS),
        `${((100 * failed) / Math.max(1, r.requests)).toFixed(2)}%`,
        failedOutside,
        pc.p50,
        pc.p99,
        pc.p999,
        ...measuredTail(phases[m], 'read'),
        cpuMsPerRequest(phases[m]),
      ]
    })
    return {
      id: this.id,
      title: 'Avalanche (TTL runs out, then Redis dies)',
      description:
        `Cache emptied, the top ${p.avalancheWarm} videos cached in one burst at t≈0, then Zipf(s=1) reads at ` +
        `${p.readRate} req/s for ${p.avalancheS} s from ${p.instances} instances. TTL ${p.ttlMs / 1000} s ` +
        `(floodgate: ${p.ttlMs / 1000}–${(2 * p.ttlMs) / 1000} s jittered). The mode's Redis is SIGKILLed at ` +
        `t=${downAt} s and restarted empty at t=${upAt} s. Errors = 5xx answers + requests without an answer.`,
      columns: [
        'DB queries',
        'DB q/s (mean)',
        'DB q/s (peak)',
        'req/s',
        'error rate',
        'errors outside the outage',
        'p50 ms',
        'p99 ms',
        'p99.9 ms',
        ...MEASURED_TAIL_COLUMNS,
        'service CPU ms/req',
      ],
      rows,
      chart: {
        title: 'Avalanche: shared expiry, then Redis down',
        xLabel: 'seconds',
        markers: [
          { x: p.ttlMs / 1000, label: 'TTL' },
          { x: downAt, label: 'Redis killed' },
          { x: upAt, label: 'Redis back (empty)' },
        ],
        panels: [
          { title: 'DB queries per second', yLabel: 'queries/s', series: dbSeries(phases) },
          {
            title: 'Error rate (5xx + no answer)',
            yLabel: '% of requests',
            series: modeSeries(errorsPerSecond),
          },
          {
            title: 'Latency p99',
            yLabel: 'ms',
            logY: true,
            series: modeSeries(byMode((m) => latencyLine(phases[m], 'read', 'p99'))),
          },
        ],
      },
      invariants: [
        {
          name: 'no 5xx outside the Redis outage (+2 s)',
          ok: MODES.every((m) => Number(rows[m][5]) === 0),
          detail: MODES.map((m) => `${MODE_LABEL[m]} ${rows[m][5]}`).join(', '),
        },
        answeredOk(phases),
        readTailInvariant(phases, 'read', 'reads'),
      ],
      raw: byMode((m) => summarize(phases[m])),
    }
  },
}
