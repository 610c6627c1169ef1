import { countMembers, InteractionKeys } from 'floodgate'
import type { Redis } from 'ioredis'
import { bearer, type Context } from './context.js'
import { type Comparison, compare } from './like_storm.js'
import { MODE_LABEL, MODES } from './modes.js'
import { runPhase } from './phase.js'
import { sleep } from './processes.js'
import {
  answeredOk,
  byMode,
  dbSeries,
  forEachMode,
  modeSeries,
  no5xx,
  perSecond,
  type Scenario,
  summarize,
} from './scenario.js'
import { MEASURED_TAIL_COLUMNS, measuredTail } from './tail.js'

/** SLOWLOG threshold on each mode's private redis-server (µs): every command of 1 ms or more. */
const LOGGED_FROM_US = 1000
/** The bound of issue 25: no Redis command touching the video as long as this (µs). */
const BOUND_US = 10_000

/** The SLOWLOG since the last RESET: the longest entry (µs, its command) and how many reached the bound. */
async function slowlogSummary(redis: Redis): Promise<{ maxUs: number; command: string; overBound: number }> {
  const log = (await redis.slowlog('GET', 100_000)) as [number, number, number, string[]][]
  let max: [number, number, number, string[]] | undefined
  for (const e of log) if (!max || e[2] > max[2]) max = e
  return {
    maxUs: max?.[2] ?? 0,
    command: max ? commandText(max[3]) : '',
    overBound: log.filter((e) => e[2] >= BOUND_US).length,
  }
}

/** A logged command in a table cell: an EVAL named by its script's file (the source's first words), else its first 3 words. */
function commandText(args: readonly string[]): string {
  if (args[0]?.toLowerCase() === 'eval') return `eval ${/[\w-]+\.lua/.exec(args[1] ?? '')?.[0] ?? '?'}`
  return args.slice(0, 3).join(' ').replace(/\s+/g, ' ').slice(0, 60)
}

/** The redis-server main thread's CPU time so far (µs, `INFO cpu`: user + sys, not wall clock). */
async function mainThreadCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1])
  return Math.round((field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1e6)
}

/** The command with the highest mean time per call since the last RESETSTAT (`INFO commandstats`), EVAL left out. */
async function slowestMean(redis: Redis): Promise<{ command: string; usecPerCall: number }> {
  const info = await redis.info('commandstats')
  let out = { command: '', usecPerCall: 0 }
  // EVAL: a script's first call on a server (its source compiled); once per script and server
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=\d+,usec=\d+,usec_per_call=([\d.]+)/gm))
    if (!/^(info|slowlog|config|eval$)/.test(m[1]!) && Number(m[2]) > out.usecPerCall)
      out = { command: m[1]!, usecPerCall: Number(m[2]) }
  return out
}

/**
 * Viral video: every seeded user likes (40 %), unlikes (30 %) and plays (30 %) ONE video, as fast
 * as `connections` closed-loop connections go over all instances, for `likeStormS`. The flush
 * drains, then video_likes must equal the Redis members exactly, like_count the member count, the
 * bucket meta's count the members held, play_count the Redis counter; Redis' CPU per op and each
 * command's mean time come from each mode's private redis-server (INFO), its longest command from
 * SLOWLOG (wall clock: reported only, see the description).
 */
export const viral: Scenario = {
  id: 'viral',
  profile: 'bench',
  async run(ctx: Context) {
    const p = ctx.params
    const tokens = ctx.userIds.map((u) => `Bearer ${bearer(ctx, u)}`)
    const video = ctx.idsByRank[0]!
    const results = await forEachMode(
      ctx,
      'viral video',
      async (mode) => {
        const d = ctx.deployments[mode]
        await d.redis.config('SET', 'slowlog-log-slower-than', String(LOGGED_FROM_US))
        await d.redis.config('SET', 'slowlog-max-len', '100000')
        await d.redis.slowlog('RESET')
        await d.redis.config('RESETSTAT')
        const cpuBefore = await mainThreadCpuUs(d.redis)
        const phase = await runPhase(d, {
          durationS: p.likeStormS,
          classes: [
            {
              name: 'ops',
              connections: p.connections,
              durationS: p.likeStormS,
              next: () => {
                const authorization = tokens[Math.floor(Math.random() * tokens.length)]!
                const x = Math.random()
                const method = x < 0.4 ? 'PUT' : x < 0.7 ? 'DELETE' : 'POST'
                return {
                  method,
                  path: `/videos/${video}/${x < 0.7 ? 'like' : 'play'}`,
                  headers: { authorization },
                }
              },
            },
          ],
        })
        const slow = await slowlogSummary(d.redis)
        const cpuUs = (await mainThreadCpuUs(d.redis)) - cpuBefore
        const mean = await slowestMean(d.redis)
        const drainStart = performance.now()
        let comparison: Comparison = await compare(ctx, d, [video])
        while (comparison.mismatches.length > 0 && performance.now() - drainStart < 30_000) {
          await sleep(250)
          comparison = await compare(ctx, d, [video])
        }
        const [count] = await countMembers(d.redis, new InteractionKeys(d.prefix), 'likes', [video])
        const drainMs = Math.round(performance.now() - drainStart)
        return { phase, comparison, slow, cpuUs, mean, count: count!, drainMs }
      },
      this.profile,
    )
    const phases = byMode((m) => results[m].phase)
    const exact = (m: (typeof MODES)[number]) =>
      results[m].comparison.mismatches.length === 0 && results[m].count.counted === results[m].count.held
    const rows = byMode((m) => {
      const r = phases[m].recorders.ops!
      const pc = r.percentiles()
      const { slow, count, cpuUs, mean } = results[m]
      return [
        perSecond(r.total.ok, p.likeStormS),
        (cpuUs / Math.max(1, r.total.ok)).toFixed(1),
        `${mean.command} ${(mean.usecPerCall / 1000).toFixed(2)}`,
        pc.p50,
        pc.p99,
        ...measuredTail(phases[m], 'ops'),
        count.held,
        (slow.maxUs / 1000).toFixed(1),
        slow.command,
        slow.overBound,
        results[m].drainMs,
        exact(m) ? 'yes' : `NO (${results[m].comparison.mismatches.length})`,
        r.total.serverErrors + r.total.errors,
      ]
    })
    return {
      id: this.id,
      title: 'Viral video',
      description:
        `${tokens.length} users (bearer tokens) on ONE video over ${p.instances} instances, ` +
        `${p.connections} closed-loop connections for ${p.likeStormS} s: 40% PUT like, 30% DELETE like, ` +
        "30% POST play. Every instance's like and play steps of one event-loop turn leave as one script " +
        'call (maxEventsPerCall 256). After the run the bench waits for the flush and compares video_likes ' +
        "with the Redis members, like_count with their number, the bucket meta's count with the members " +
        "held, and play_count with the Redis counter. Longest Redis command: the SLOWLOG of the mode's " +
        'private redis-server (every command of 1 ms or more, wall clock: on a loaded box a descheduled ' +
        `redis-server shows as a long command); "≥ ${BOUND_US / 1000} ms" counts those entries.`,
      columns: [
        'ops/s (2xx)',
        'Redis CPU µs per op',
        'slowest mean command ms',
        'p50 ms',
        'p99 ms',
        ...MEASURED_TAIL_COLUMNS,
        'likers at the end',
        'longest Redis command ms (wall)',
        'its command',
        `commands ≥ ${BOUND_US / 1000} ms (wall)`,
        'drain ms',
        'DB == Redis, counts exact',
        '5xx+errors',
      ],
      rows,
      chart: {
        title: 'Viral video: every user on one video',
        xLabel: 'seconds',
        panels: [
          {
            title: 'Operations per second (2xx)',
            yLabel: 'ops/s',
            series: modeSeries(byMode((m) => (phases[m].recorders.ops?.timeline() ?? []).map((s) => s.ok))),
          },
          { title: 'DB queries per second', yLabel: 'queries/s', series: dbSeries(phases) },
        ],
      },
      invariants: [
        {
          name: 'DB rows == Redis members after the flush drains; like count exact',
          ok: MODES.every(exact),
          detail: MODES.map(
            (m) =>
              `${MODE_LABEL[m]}: ${results[m].comparison.mismatches.length} mismatches, meta ${results[m].count.counted} / held ${results[m].count.held}${
                results[m].comparison.mismatches[0]
                  ? ` e.g. ${JSON.stringify(results[m].comparison.mismatches[0])}`
                  : ''
              }`,
          ).join('; '),
        },
        {
          name: `every Redis command's mean under ${BOUND_US / 1000} ms (commandstats, floodgate)`,
          ok: results.floodgate.mean.usecPerCall < BOUND_US,
          detail: MODES.map(
            (m) =>
              `${MODE_LABEL[m]}: ${results[m].mean.command} ${results[m].mean.usecPerCall} µs per call; SLOWLOG longest ${results[m].slow.maxUs} µs (${results[m].slow.command})`,
          ).join('; '),
        },
        no5xx(phases),
        answeredOk(phases),
      ],
      raw: byMode((m) => ({
        comparison: results[m].comparison,
        count: results[m].count,
        slow: results[m].slow,
        drainMs: results[m].drainMs,
        ...(summarize(phases[m]) as object),
      })),
    }
  },
}
