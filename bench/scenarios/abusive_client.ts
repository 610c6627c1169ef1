import { zipfSampler } from '../support/zipf.js'
import { bearer, type Context, randomIp } from './context.js'
import { MODE_LABEL, MODES, QUOTAS } from './modes.js'
import { runPhase } from './phase.js'
import { newHistogram, percentilesOf } from './recorder.js'
import {
  answeredOk,
  byMode,
  dbSeries,
  forEachMode,
  modeSeries,
  no5xx,
  type Scenario,
  slidingWindowBound,
  summarize,
} from './scenario.js'
import { MEASURED_TAIL_COLUMNS, measuredTail, readTailInvariant } from './tail.js'

const ABUSIVE_IP = '192.0.2.66'

/**
 * Abusive client: normal anonymous users (random addresses) read at a fixed rate; after a
 * baseline, one authenticated user and one anonymous address flood as fast as their
 * connections go. Admitted = their 2xx answers, checked against the sliding-window bound
 * limit × (1 + duration / window); normal users' p99 before and during the flood.
 */
export const abusiveClient: Scenario = {
  id: 'abusive-client',
  async run(ctx: Context) {
    const p = ctx.params
    const rank = zipfSampler(ctx.idsByRank.length)
    const abuser = ctx.userIds[ctx.userIds.length - 1]!
    const token = `Bearer ${bearer(ctx, abuser)}`
    const total = p.abusiveBaselineS + p.abusiveS
    const read = () => `/videos/${ctx.idsByRank[rank()]}`
    const phases = await forEachMode(ctx, 'abusive client', (mode) =>
      runPhase(ctx.deployments[mode], {
        durationS: total,
        classes: [
          {
            name: 'normal',
            connections: p.connections,
            durationS: total,
            rate: p.readRate / 2,
            next: () => ({ method: 'GET', path: read(), headers: { 'x-forwarded-for': randomIp() } }),
          },
          {
            name: 'abusive-user',
            connections: 2 * p.instances,
            durationS: total,
            delayS: p.abusiveBaselineS,
            next: () => ({ method: 'GET', path: read(), headers: { authorization: token } }),
          },
          {
            name: 'abusive-ip',
            connections: 2 * p.instances,
            durationS: total,
            delayS: p.abusiveBaselineS,
            next: () => ({ method: 'GET', path: read(), headers: { 'x-forwarded-for': ABUSIVE_IP } }),
          },
        ],
      }),
    )
    // over the flood as it ran: autocannon may run a class up to a second past its duration
    const bound = (m: (typeof MODES)[number], name: string, limit: number) =>
      slidingWindowBound(limit, phases[m].recorders[name]!.spanMs, QUOTAS.windowMs)
    const normalP99 = (m: (typeof MODES)[number], during: boolean) => {
      const h = newHistogram()
      for (const [t, s] of (phases[m].recorders.normal?.seconds ?? []).entries())
        if (during === t >= p.abusiveBaselineS) h.add(s.histogram)
      return percentilesOf(h).p99
    }
    const rows = byMode((m) => {
      const r = phases[m].recorders
      return [
        r['abusive-user']!.requests,
        `${r['abusive-user']!.total.ok} / ${bound(m, 'abusive-user', QUOTAS.user)}`,
        r['abusive-ip']!.requests,
        `${r['abusive-ip']!.total.ok} / ${bound(m, 'abusive-ip', QUOTAS.anonymous)}`,
        normalP99(m, false),
        normalP99(m, true),
        ...measuredTail(phases[m], 'normal'),
        r.normal!.total.limited,
        phases[m].dbTotal,
      ]
    })
    const admittedOk = (m: (typeof MODES)[number]) =>
      phases[m].recorders['abusive-user']!.total.ok <= bound(m, 'abusive-user', QUOTAS.user) &&
      phases[m].recorders['abusive-ip']!.total.ok <= bound(m, 'abusive-ip', QUOTAS.anonymous)
    return {
      id: this.id,
      title: 'Abusive client',
      description:
        `Normal anonymous users (random addresses) read Zipf(s=1) at ${p.readRate / 2} req/s for ${total} s; ` +
        `from t=${p.abusiveBaselineS} s one user (bearer token, quota ${QUOTAS.user} per ${QUOTAS.windowMs / 1000} s) ` +
        `and one address (${ABUSIVE_IP}, anonymous quota ${QUOTAS.anonymous} per ${QUOTAS.windowMs / 1000} s) flood ` +
        `with ${2 * p.instances} connections each, closed loop, for ${p.abusiveS} s. Admitted bound of the sliding ` +
        'window counter over the flood as it ran (first request sent to last answer, per abuser): ' +
        'limit × (1 + that time / window).',
      columns: [
        'abusive user requests',
        'admitted / bound',
        'abusive IP requests',
        'admitted / bound',
        'normal p99 ms before',
        'normal p99 ms during',
        ...MEASURED_TAIL_COLUMNS.map((c) => `normal ${c}`),
        'normal users 429s',
        'DB queries',
      ],
      rows,
      chart: {
        title: 'Abusive client: one user and one address flooding',
        xLabel: 'seconds',
        markers: [{ x: p.abusiveBaselineS, label: 'flood starts' }],
        panels: [
          {
            title: 'Normal users: latency p99',
            yLabel: 'ms',
            logY: true,
            series: modeSeries(
              byMode((m) => (phases[m].recorders.normal?.timeline() ?? []).map((s) => s.p99)),
            ),
          },
          {
            title: 'Abusers: requests sent (solid) and admitted (dashed) per second',
            yLabel: 'req/s',
            series: [
              ...modeSeries(
                byMode((m) =>
                  ['abusive-user', 'abusive-ip'].reduce<number[]>((acc, name) => {
                    for (const [i, s] of (phases[m].recorders[name]?.timeline() ?? []).entries())
                      acc[i] = (acc[i] ?? 0) + s.requests
                    return acc
                  }, []),
                ),
                { suffix: ' sent' },
              ),
              ...modeSeries(
                byMode((m) =>
                  ['abusive-user', 'abusive-ip'].reduce<number[]>((acc, name) => {
                    for (const [i, s] of (phases[m].recorders[name]?.timeline() ?? []).entries())
                      acc[i] = (acc[i] ?? 0) + s.ok
                    return acc
                  }, []),
                ),
                { dashed: true, suffix: ' admitted' },
              ),
            ],
          },
          { title: 'DB queries per second', yLabel: 'queries/s', series: dbSeries(phases) },
        ],
      },
      invariants: [
        {
          name: 'admitted ≤ limit (sliding-window bound)',
          ok: MODES.every(admittedOk),
          detail: MODES.map((m) => `${MODE_LABEL[m]}: user ${rows[m][1]}, IP ${rows[m][3]}`).join('; '),
        },
        no5xx(phases),
        answeredOk(phases),
        readTailInvariant(phases, 'normal', 'normal users’ reads'),
      ],
      raw: byMode((m) => summarize(phases[m])),
    }
  },
}
