import { InteractionKeys, readMembers } from 'floodgate'
import pg from 'pg'
import { bearer, type Context } from './context.js'
import { MODE_LABEL, MODES, type ModeDeployment, pgUrl } from './modes.js'
import { runPhase } from './phase.js'
import { sleep } from './processes.js'
import { newHistogram, percentilesOf } from './recorder.js'
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

export interface Comparison {
  videos: number
  mismatches: Array<{ videoId: string; what: string; db: number; redis: number }>
}

/**
 * DB rows vs Redis state of `videoIds`: like members (set equality), like_count and play_count.
 * `membersOf` reads a video's likers from Redis (default: the library's layout).
 */
export async function compare(
  ctx: Context,
  d: ModeDeployment,
  videoIds: string[],
  membersOf?: (videoId: string) => Promise<string[]>,
): Promise<Comparison> {
  const keys = new InteractionKeys(d.prefix)
  const readLikers = membersOf ?? ((v: string) => readMembers(d.redis, keys, 'likes', v))
  const client = new pg.Client({ connectionString: pgUrl(ctx.databaseOf(d.mode)) })
  await client.connect()
  try {
    const likes = await client.query<{ v: string; u: string }>(
      'select video_id::text as v, user_id::text as u from video_likes where video_id = any($1::bigint[])',
      [videoIds],
    )
    const counts = await client.query<{ id: string; likes: string; plays: string }>(
      'select id::text, like_count::text as likes, play_count::text as plays from videos where id = any($1::bigint[])',
      [videoIds],
    )
    const dbMembers = new Map<string, Set<string>>(videoIds.map((v) => [v, new Set()]))
    for (const row of likes.rows) dbMembers.get(row.v)?.add(row.u)
    const pipeline = d.redis.pipeline()
    for (const v of videoIds) pipeline.get(keys.plays(v))
    const replies = (await pipeline.exec()) ?? []
    const likers = await Promise.all(videoIds.map(readLikers))
    const mismatches: Comparison['mismatches'] = []
    videoIds.forEach((v, i) => {
      const members = new Set(likers[i])
      const plays = Number((replies[i]?.[1] as string | null | undefined) ?? 0)
      const db = dbMembers.get(v) ?? new Set<string>()
      const row = counts.rows.find((r) => r.id === v)
      const differ = db.size !== members.size || [...db].some((u) => !members.has(u))
      if (differ) mismatches.push({ videoId: v, what: 'like members', db: db.size, redis: members.size })
      if (Number(row?.likes) !== members.size)
        mismatches.push({ videoId: v, what: 'like_count', db: Number(row?.likes), redis: members.size })
      if (Number(row?.plays) !== plays)
        mismatches.push({ videoId: v, what: 'play_count', db: Number(row?.plays), redis: plays })
    })
    return { videos: videoIds.length, mismatches }
  } finally {
    await client.end()
  }
}

/**
 * Like storm: 1,000 users liking (40%), unliking (30%) and playing (30%) the top 100 videos
 * at a fixed offered rate; the flush lag is sampled every second from every instance's
 * /metrics; at the end, once the flush has drained, DB rows must equal Redis state.
 */
export const likeStorm: Scenario = {
  id: 'like-storm',
  profile: 'bench',
  async run(ctx: Context) {
    const p = ctx.params
    const users = ctx.userIds.slice(0, 1000)
    const tokens = users.map((u) => `Bearer ${bearer(ctx, u)}`)
    const top = ctx.idsByRank.slice(0, 100)
    const results = await forEachMode(
      ctx,
      'like storm',
      async (mode) => {
        const d = ctx.deployments[mode]
        const phase = await runPhase(d, {
          durationS: p.likeStormS,
          classes: [
            {
              name: 'ops',
              connections: p.connections,
              durationS: p.likeStormS,
              rate: p.likeRate,
              next: () => {
                const u = Math.floor(Math.random() * tokens.length)
                const v = top[Math.floor(Math.random() * top.length)]!
                const x = Math.random()
                return x < 0.4
                  ? { method: 'PUT', path: `/videos/${v}/like`, headers: { authorization: tokens[u]! } }
                  : x < 0.7
                    ? { method: 'DELETE', path: `/videos/${v}/like`, headers: { authorization: tokens[u]! } }
                    : { method: 'POST', path: `/videos/${v}/play`, headers: { authorization: tokens[u]! } }
              },
            },
          ],
        })
        const drainStart = performance.now()
        let comparison = await compare(ctx, d, top)
        while (comparison.mismatches.length > 0 && performance.now() - drainStart < 30_000) {
          await sleep(250)
          comparison = await compare(ctx, d, top)
        }
        return { phase, comparison, drainMs: Math.round(performance.now() - drainStart) }
      },
      this.profile,
    )
    const phases = byMode((m) => results[m].phase)
    const lagLine = byMode((m) => phases[m].samples.map((s) => s.flushLagS ?? 0))
    // the instances' stalls: a flush stuck behind a stalled event loop (or a starved PostgreSQL
    // backend) shows up as lag growing 1 s per second, whatever the flush design
    const loopLine = byMode((m) => phases[m].samples.map((s) => s.eventLoopMaxS ?? 0))
    const rows = byMode((m) => {
      const r = phases[m].recorders.ops!
      const lag = newHistogram()
      for (const s of lagLine[m]) lag.recordValue(Math.max(1, Math.round(s * 1_000_000)))
      const lagPc = percentilesOf(lag)
      const pc = r.percentiles()
      return [
        perSecond(r.total.ok, p.likeStormS),
        pc.p50,
        pc.p99,
        ...measuredTail(phases[m], 'ops'),
        (lagPc.p50 / 1000).toFixed(2),
        (lagPc.p99 / 1000).toFixed(2),
        Math.max(0, ...loopLine[m]).toFixed(2),
        results[m].drainMs,
        results[m].comparison.mismatches.length === 0
          ? 'yes'
          : `NO (${results[m].comparison.mismatches.length})`,
        r.total.serverErrors + r.total.errors,
      ]
    })
    return {
      id: this.id,
      title: 'Like storm',
      description:
        `${users.length} users (bearer tokens) send ${p.likeRate} ops/s for ${p.likeStormS} s over ` +
        `${p.instances} instances on the top 100 videos: 40% PUT like, 30% DELETE like, 30% POST play. ` +
        'Flush lag = the age of the oldest interaction event not yet in PostgreSQL (pending or undelivered, ' +
        "over the whole consumer group), read every second from every instance's /metrics (max over instances; " +
        'each instance refreshes it about once a second). It is the worst event of each second, so its p50 and ' +
        "p99 (of about 60 samples: the worst second) sit far above bench:flush's per-event lag percentiles; " +
        'event-loop max = the longest event-loop delay of any instance in the run: a stalled instance (a ' +
        'CPU-starved box) holds its pending batch, so the lag grows by 1 s per second until it resumes (and ' +
        'its own gauge is not refreshed meanwhile); new events of its partitions go to the others after 2 s. ' +
        'After the run the bench waits for the flush and compares, for each of the 100 ' +
        'videos, video_likes rows with the Redis like set, and like_count / play_count with Redis.',
      columns: [
        'ops/s (2xx)',
        'p50 ms',
        'p99 ms',
        ...MEASURED_TAIL_COLUMNS,
        'flush lag p50 s',
        'flush lag p99 s',
        'event-loop max s',
        'drain ms',
        'DB rows == Redis',
        '5xx+errors',
      ],
      rows,
      chart: {
        title: 'Like storm: 1,000 users on the top 100 videos',
        xLabel: 'seconds',
        panels: [
          {
            title: 'Operations per second (2xx)',
            yLabel: 'ops/s',
            series: modeSeries(byMode((m) => (phases[m].recorders.ops?.timeline() ?? []).map((s) => s.ok))),
          },
          { title: 'Flush lag (oldest unflushed event)', yLabel: 's', series: modeSeries(lagLine) },
          { title: 'Longest event-loop delay of any instance', yLabel: 's', series: modeSeries(loopLine) },
          { title: 'DB queries per second', yLabel: 'queries/s', series: dbSeries(phases) },
        ],
      },
      invariants: [
        {
          name: 'DB rows == Redis state after the flush drains',
          ok: MODES.every((m) => results[m].comparison.mismatches.length === 0),
          detail: MODES.map(
            (m) =>
              `${MODE_LABEL[m]}: ${results[m].comparison.mismatches.length} mismatches${
                results[m].comparison.mismatches[0]
                  ? ` e.g. ${JSON.stringify(results[m].comparison.mismatches[0])}`
                  : ''
              }`,
          ).join('; '),
        },
        no5xx(phases),
        answeredOk(phases),
      ],
      raw: byMode((m) => ({
        comparison: results[m].comparison,
        drainMs: results[m].drainMs,
        ...(summarize(phases[m]) as object),
      })),
    }
  },
}
