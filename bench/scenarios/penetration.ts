import type { Redis } from 'ioredis'
import { zipfSampler } from '../support/zipf.js'
import { type Context, randomIp } from './context.js'
import { runPhase } from './phase.js'
import {
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

/** Keys other than the rate limiter's (`va:rl:*`, the same in every mode), and INFO used_memory. */
async function redisFootprint(redis: Redis): Promise<{ keys: number; usedMemoryBytes: number }> {
  let keys = 0
  let cursor = '0'
  do {
    const [next, batch] = await redis.scan(cursor, 'COUNT', 5000)
    cursor = next
    keys += batch.filter((k) => !k.includes(':rl:')).length
  } while (cursor !== '0')
  const used = /used_memory:(\d+)/.exec(await redis.info('memory'))?.[1]
  return { keys, usedMemoryBytes: Number(used ?? 0) }
}

/**
 * Penetration attack: half of the requests ask for random ids that do not exist (never the
 * same twice in practice), half are the normal Zipf(s=1) mix. Measures DB queries and what the
 * attack adds to Redis (keys, used_memory).
 */
export const penetration: Scenario = {
  id: 'penetration',
  async run(ctx: Context) {
    const p = ctx.params
    const rank = zipfSampler(ctx.idsByRank.length)
    const missing = () => String(ctx.missingIdFloor + BigInt(Math.floor(Math.random() * 1e12)))
    const results = await forEachMode(ctx, 'penetration', async (mode) => {
      const d = ctx.deployments[mode]
      const before = await redisFootprint(d.redis)
      const phase = await runPhase(d, {
        durationS: p.penetrationS,
        classes: [
          {
            name: 'read',
            connections: p.connections,
            durationS: p.penetrationS,
            rate: p.readRate,
            next: () => ({
              method: 'GET',
              path: `/videos/${Math.random() < 0.5 ? missing() : ctx.idsByRank[rank()]}`,
              headers: { 'x-forwarded-for': randomIp() },
            }),
          },
        ],
      })
      const after = await redisFootprint(d.redis)
      return { phase, before, after }
    })
    const phases = byMode((m) => results[m].phase)
    const rows = byMode((m) => {
      const r = phases[m].recorders.read!
      const pc = r.percentiles()
      const { before, after } = results[m]
      return [
        phases[m].dbTotal,
        perSecond(phases[m].dbTotal, p.penetrationS),
        after.keys - before.keys,
        ((after.usedMemoryBytes - before.usedMemoryBytes) / 1024 / 1024).toFixed(2),
        perSecond(r.requests, p.penetrationS),
        r.total.clientErrors,
        pc.p50,
        pc.p99,
        ...measuredTail(phases[m], 'read'),
        r.total.serverErrors + r.total.errors,
        cpuMsPerRequest(phases[m]),
      ]
    })
    return {
      id: this.id,
      title: 'Penetration attack',
      description:
        `${p.readRate} req/s for ${p.penetrationS} s from ${p.instances} instances: 50% random ids that do not ` +
        `exist (drawn from 10^12 values above the largest id), 50% Zipf(s=1) over ${ctx.idsByRank.length} videos. ` +
        'Redis keys (all but the rate limiter’s) and INFO used_memory of the mode’s private Redis, before and after.',
      columns: [
        'DB queries',
        'DB q/s',
        'Redis keys added',
        'Redis MiB added',
        'req/s',
        '404s',
        'p50 ms',
        'p99 ms',
        ...MEASURED_TAIL_COLUMNS,
        '5xx+errors',
        'service CPU ms/req',
      ],
      rows,
      chart: {
        title: 'Penetration attack (50% nonexistent ids)',
        xLabel: 'seconds',
        panels: [
          { title: 'DB queries per second', yLabel: 'queries/s', series: dbSeries(phases) },
          {
            title: 'Latency p99 (solid) and p50 (dashed)',
            yLabel: 'ms',
            logY: true,
            series: [
              ...modeSeries(byMode((m) => latencyLine(phases[m], 'read', 'p99'))),
              ...modeSeries(
                byMode((m) => latencyLine(phases[m], 'read', 'p50')),
                { dashed: true, suffix: ' p50' },
              ),
            ],
          },
        ],
      },
      invariants: [no5xx(phases), readTailInvariant(phases, 'read', 'reads')],
      raw: byMode((m) => ({
        redisBefore: results[m].before,
        redisAfter: results[m].after,
        ...(summarize(phases[m]) as object),
      })),
    }
  },
}
