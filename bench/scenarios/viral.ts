import { cpus, loadavg } from 'node:os'
import { bucketKeys, countMembers, InteractionKeys, readGeometry } from 'floodgate'
import type { Redis } from 'ioredis'
import pg from 'pg'
import { bearer, type Context, randomIp } from './context.js'
import { oldLayoutKeys, oldPlayScript, oldToggleScript } from './legacy/interactions.js'
import { type Comparison, compare } from './like_storm.js'
import { MODE_LABEL, MODES, type ModeDeployment, type ModeName, pgUrl } from './modes.js'
import { runPhase } from './phase.js'
import { sleep } from './processes.js'
import {
  answeredOk,
  byMode,
  forEachMode,
  modeSeries,
  no5xx,
  perSecond,
  type Scenario,
  summarize,
} from './scenario.js'
import {
  latencyLatest,
  libraryScripts,
  memoryOf,
  SlowlogTap,
  scanKeys,
  scriptTime,
  setMembers,
  type TapResult,
} from './viral_redis.js'
import { seedViral, type ViralSeed } from './viral_seed.js'

/** The bounds of issue 25 for the floodgate mode: longest command (µs), bytes per like, largest key (B). */
const BOUND_US = 10_000
const BYTES_PER_LIKE = 12
const LARGEST_KEY = 1 << 20
/** The SLOWLOG threshold left on the private redis-servers after the storm (µs). */
const AFTER_US = 10_000
/** The viral video's popularity rank: past the like storm's top 100, whose members it compares. */
const VIRAL_RANK = 101
const TOGGLES = ['toggle-batch-n.lua', 'toggle-5.lua', 'legacy-toggle-4.lua']
const PLAYS = ['play-batch-n.lua', 'play-6.lua', 'play-5.lua (per-viewer key)']

interface ModeResult {
  seed: ViralSeed
  phase: Awaited<ReturnType<typeof runPhase>>
  tap: TapResult
  latency: { ms: number; event: string }
  comparison: Comparison
  drainMs: number
  likers: number
  likeKeys: { count: number; total: number; largest: number }
  seenKeys: { count: number; total: number; largest: number }
  countedPlays: number
  cpuUs: number
  /** 1-minute load average ÷ cores when the storm ended. */
  loadPerCore: number
}

/** The redis-server main thread's CPU time so far (µs, `INFO cpu`: user + sys, not wall clock). */
async function mainThreadCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1])
  return Math.round((field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1e6)
}

/** The video's like keys and play-dedupe keys in the mode's layout (older design: one SET, a key per viewer). */
async function itemKeys(d: ModeDeployment, video: string): Promise<{ likes: string[]; seen: string[] }> {
  const keys = new InteractionKeys(d.prefix)
  if (d.mode === 'legacy') {
    const old = oldLayoutKeys(keys, video)
    return { likes: [old.likes], seen: await scanKeys(d.redis, `${old.seenPrefix}*`) }
  }
  const geometry = await readGeometry(d.redis, keys, 'likes', video)
  return {
    likes: [...bucketKeys(keys, 'likes', video, geometry), keys.memberMeta('likes', video)],
    seen: await scanKeys(d.redis, `${keys.playSeenPrefix(video)}*`),
  }
}

async function likerCount(d: ModeDeployment, video: string): Promise<number> {
  const keys = new InteractionKeys(d.prefix)
  if (d.mode === 'legacy') return d.redis.scard(oldLayoutKeys(keys, video).likes)
  const [count] = await countMembers(d.redis, keys, 'likes', [video])
  return count!.counted
}

/** Whether like_count and play_count in PostgreSQL equal the video's Redis counts (the flush has drained). */
async function countsMatch(ctx: Context, d: ModeDeployment, video: string): Promise<boolean> {
  const db = new pg.Client({ connectionString: pgUrl(ctx.databaseOf(d.mode)) })
  await db.connect()
  try {
    const { rows } = await db.query<{ likes: string; plays: string }>(
      'select like_count::text as likes, play_count::text as plays from videos where id = $1::bigint',
      [video],
    )
    const plays = Number((await d.redis.get(new InteractionKeys(d.prefix).plays(video))) ?? 0)
    return Number(rows[0]?.likes) === (await likerCount(d, video)) && Number(rows[0]?.plays) === plays
  } finally {
    await db.end()
  }
}

async function runMode(ctx: Context, d: ModeDeployment, video: string): Promise<ModeResult> {
  const p = ctx.params
  const keys = new InteractionKeys(d.prefix)
  const oldLayout = d.mode === 'legacy'
  const seed = await seedViral(d, ctx.databaseOf(d.mode), video, {
    likers: p.viralLikers,
    users: p.viralUsers,
    oldLayout,
  })
  ctx.log(`  seeded ${seed.likers} likers: PostgreSQL ${seed.pgS} s, Redis ${seed.redisS} s`)
  const tokens = seed.users.map((u) => `Bearer ${bearer(ctx, u)}`)
  const token = () => tokens[Math.floor(Math.random() * tokens.length)]!
  const playsBefore = Number((await d.redis.get(keys.plays(video))) ?? 0)
  await d.redis.config('SET', 'latency-monitor-threshold', '1')
  await d.redis.call('LATENCY', 'RESET')
  const tap = new SlowlogTap(
    d.redis,
    [
      ...libraryScripts(),
      ['legacy-toggle-4.lua', oldToggleScript],
      ['play-5.lua (per-viewer key)', oldPlayScript],
    ],
    BOUND_US,
  )
  // likes and unlikes 70 %, plays 30 % of the storm's interaction connections
  const likeConnections = Math.round(p.connections * 0.7)
  const cpuBefore = await mainThreadCpuUs(d.redis)
  await tap.start()
  const phase = await runPhase(d, {
    durationS: p.likeStormS,
    classes: [
      {
        name: 'likes',
        connections: likeConnections,
        durationS: p.likeStormS,
        next: () => ({
          // 4 likes to 3 unlikes
          method: Math.random() < 4 / 7 ? 'PUT' : 'DELETE',
          path: `/videos/${video}/like`,
          headers: { authorization: token(), 'x-forwarded-for': randomIp() },
        }),
      },
      {
        name: 'plays',
        connections: p.connections - likeConnections,
        durationS: p.likeStormS,
        next: () => ({
          method: 'POST',
          path: `/videos/${video}/play`,
          headers: { authorization: token(), 'x-forwarded-for': randomIp() },
        }),
      },
      {
        name: 'page',
        connections: Math.max(1, p.connections / 4),
        durationS: p.likeStormS,
        next: () => ({
          method: 'GET',
          path: `/videos/${video}`,
          headers: { authorization: token(), 'x-forwarded-for': randomIp() },
        }),
      },
    ],
  })
  const tapped = await tap.stop(AFTER_US)
  const cpuUs = (await mainThreadCpuUs(d.redis)) - cpuBefore
  const loadPerCore = loadavg()[0]! / cpus().length
  const latency = await latencyLatest(d.redis)
  const drainStart = performance.now()
  // the counts first (one row, two Redis reads a round): comparing 1M members each round took minutes
  while (!(await countsMatch(ctx, d, video)) && performance.now() - drainStart < 60_000) await sleep(100)
  const drainMs = Math.round(performance.now() - drainStart)
  const members = oldLayout ? (v: string) => setMembers(d.redis, oldLayoutKeys(keys, v).likes) : undefined
  let comparison = await compare(ctx, d, [video], members)
  while (comparison.mismatches.length > 0 && performance.now() - drainStart < 120_000) {
    await sleep(1000)
    comparison = await compare(ctx, d, [video], members)
  }
  const item = await itemKeys(d, video)
  const likeMemory = await memoryOf(d.redis, item.likes)
  const seenMemory = await memoryOf(d.redis, item.seen)
  return {
    seed,
    phase,
    tap: tapped,
    latency,
    comparison,
    drainMs,
    likers: await likerCount(d, video),
    likeKeys: { count: item.likes.length, ...likeMemory },
    seenKeys: { count: item.seen.length, ...seenMemory },
    countedPlays: Number((await d.redis.get(keys.plays(video))) ?? 0) - playsBefore,
    cpuUs,
    loadPerCore,
  }
}

/** 2xx answers of the storm's likes and unlikes, and of its plays. */
function okBy(r: ModeResult): { likes: number; plays: number } {
  return { likes: r.phase.recorders.likes?.total.ok ?? 0, plays: r.phase.recorders.plays?.total.ok ?? 0 }
}

/** Every answer of the storm's classes together: 2xx, 5xx + errors. */
function answers(r: ModeResult): { ok: number; bad: number } {
  const all = Object.values(r.phase.recorders)
  return {
    ok: all.reduce((n, c) => n + c.total.ok, 0),
    bad: all.reduce((n, c) => n + c.total.serverErrors + c.total.errors, 0),
  }
}

const perOp = (usec: number, n: number) => (n > 0 ? (usec / n).toFixed(2) : '-')
const fixed = (n: number, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-')

/**
 * Viral video: one video pre-seeded with 1,000,000 likers (quick: 50,000), then a closed-loop
 * storm of likes, unlikes and plays on it from 10,000 users (quick: 2,000) plus reads of its
 * page, the service's defaults, 4 instances (quick: 2). The older design's instances write in
 * the older interaction layout (one SET per video, a key per viewer: legacy/interactions.ts), the
 * others through the library. Per mode: bytes per like and per counted play, the longest Redis
 * command, Redis µs per like and per play (the scripts' own time), requests/s, flush lag, and
 * Redis == PostgreSQL after the flush drains.
 */
export const viral: Scenario = {
  id: 'viral',
  profile: 'viral',
  async run(ctx: Context) {
    const p = ctx.params
    const video = ctx.idsByRank[VIRAL_RANK - 1]!
    const results = await forEachMode(
      ctx,
      'viral video',
      (mode) => runMode(ctx, ctx.deployments[mode], video),
      this.profile,
    )
    const phases = byMode((m) => results[m].phase)
    const exact = (m: ModeName) => results[m].comparison.mismatches.length === 0
    const figures = byMode((m) => {
      const r = results[m]
      const ok = okBy(r)
      const toggles = scriptTime(r.tap, TOGGLES)
      const plays = scriptTime(r.tap, PLAYS)
      return {
        ok,
        usPerLike: perOp(toggles.usec, ok.likes),
        usPerPlay: perOp(plays.usec, ok.plays),
        likesPerCall: perOp(ok.likes, toggles.calls),
        bytesPerLike: r.likeKeys.total / Math.max(1, r.likers),
        bytesPerPlay: r.seenKeys.total / Math.max(1, r.countedPlays),
        largest: Math.max(r.likeKeys.largest, r.seenKeys.largest),
        flushLagMaxS: Math.max(0, ...r.phase.samples.map((s) => s.flushLagS ?? 0)),
      }
    })
    const rows = byMode((m) => {
      const r = results[m]
      const f = figures[m]
      const page = r.phase.recorders.page!
      const all = answers(r)
      return [
        r.seed.likers,
        `${r.seed.pgS} / ${r.seed.redisS}`,
        perSecond(f.ok.likes, p.likeStormS),
        perSecond(f.ok.plays, p.likeStormS),
        perSecond(page.total.ok, p.likeStormS),
        `${Math.round(r.phase.recorders.likes!.percentiles().p99)} / ${Math.round(r.phase.recorders.plays!.percentiles().p99)}`,
        fixed(f.bytesPerLike, 2),
        fixed(f.bytesPerPlay, 1),
        r.countedPlays,
        f.largest,
        r.likeKeys.count + r.seenKeys.count,
        f.usPerLike,
        f.likesPerCall,
        f.usPerPlay,
        fixed(r.cpuUs / Math.max(1, all.ok), 1),
        `${fixed(r.tap.longest.us / 1000, 1)} ${r.tap.longest.command}`,
        r.tap.overBound,
        `${r.latency.ms} ${r.latency.event} (bench's own ${fixed(r.tap.ownLongestUs / 1000, 1)})`,
        fixed(f.flushLagMaxS, 1),
        r.drainMs,
        exact(m) ? 'yes' : `NO (${r.comparison.mismatches.length})`,
        all.bad,
      ]
    })
    const fg = results.floodgate
    const overloaded = fg.loadPerCore >= 1
    return {
      id: this.id,
      title: 'Viral video',
      description:
        `ONE video (popularity rank ${VIRAL_RANK}) pre-seeded with ${p.viralLikers} likers (PostgreSQL: INSERT … SELECT; ` +
        "Redis: the library's restore path, 250 members a step, or the older layout's SET through pipelined SADDs), " +
        `then ${p.viralUsers} users on it over ${p.instances} instances with the service's defaults: ${p.connections} ` +
        `closed-loop connections, 70 % of them liking or unliking (4 : 3), 30 % playing, plus ${Math.max(1, p.connections / 4)} ` +
        `of page reads (GET /videos/:id), for ${p.likeStormS} s. The older design's instances also write interactions ` +
        'in the older layout (one SET + SCARD per like, one SET NX key per viewer and play, one script call per ' +
        'request; bench/scenarios/legacy/interactions.ts); the other two through the library (toggles and plays ' +
        "of one poll phase as one script call). Bytes per like: MEMORY USAGE (SAMPLES 0) over the video's like keys " +
        '÷ its likers; per play: over its dedupe keys ÷ the plays counted in the storm (one dedupe window). Redis µs ' +
        "per like / play: the toggle / play scripts' own time (every command logged with slowlog-log-slower-than 0 " +
        'during the storm, drained every 250 ms) ÷ the 2xx likes+unlikes / plays. Longest command: the same log ' +
        '(wall clock: a descheduled redis-server shows as a long command); LATENCY LATEST with a 1 ms threshold, ' +
        "which also counts the bench's own commands (their longest in brackets: the log's drains). " +
        "Flush lag: the highest of the per-second samples; drain: from the storm's end until like_count and " +
        'play_count equal Redis; then video_likes must equal the members.',
      columns: [
        'likers seeded',
        'seed s (PG / Redis)',
        'likes+unlikes/s (2xx)',
        'plays/s (2xx)',
        'page reads/s (2xx)',
        'p99 ms likes / plays',
        'B per like',
        'B per counted play',
        'plays counted',
        'largest key B',
        'item keys',
        'Redis µs per like',
        'likes per toggle call',
        'Redis µs per play',
        'Redis CPU µs per request (main thread)',
        'longest Redis command ms (wall)',
        `commands ≥ ${BOUND_US / 1000} ms`,
        'LATENCY LATEST max ms',
        'flush lag max s',
        'drain ms',
        'DB == Redis',
        '5xx+errors',
      ],
      rows,
      chart: {
        title: 'Viral video: every user on one video',
        xLabel: 'seconds',
        panels: [
          {
            title: 'Likes + unlikes per second (2xx)',
            yLabel: 'requests/s',
            series: modeSeries(byMode((m) => (phases[m].recorders.likes?.timeline() ?? []).map((s) => s.ok))),
          },
          {
            title: 'Flush lag (oldest unflushed event)',
            yLabel: 's',
            series: modeSeries(byMode((m) => phases[m].samples.map((s) => s.flushLagS ?? 0))),
          },
        ],
      },
      invariants: [
        {
          name: 'DB rows == Redis members, like_count and play_count after the flush drains',
          ok: MODES.every(exact),
          detail: MODES.map(
            (m) =>
              `${MODE_LABEL[m]}: ${results[m].comparison.mismatches.length} mismatches after ${results[m].drainMs} ms${
                results[m].comparison.mismatches[0]
                  ? ` e.g. ${JSON.stringify(results[m].comparison.mismatches[0])}`
                  : ''
              }`,
          ).join('; '),
        },
        {
          name: `floodgate: ≤ ${BYTES_PER_LIKE} B per like`,
          ok: figures.floodgate.bytesPerLike <= BYTES_PER_LIKE,
          detail: MODES.map((m) => `${MODE_LABEL[m]} ${fixed(figures[m].bytesPerLike, 2)} B`).join(', '),
        },
        {
          name: 'floodgate: no key of the video over 1 MB',
          ok: figures.floodgate.largest <= LARGEST_KEY,
          detail: MODES.map((m) => `${MODE_LABEL[m]} ${figures[m].largest} B`).join(', '),
        },
        {
          name: `floodgate: no Redis command ≥ ${BOUND_US / 1000} ms (judged when the 1-min load ÷ cores < 1 at the storm's end)`,
          ok: overloaded || fg.tap.overBound === 0,
          detail:
            `${overloaded ? 'NOT JUDGED, box overloaded' : 'judged'}: floodgate load ${fixed(fg.loadPerCore, 2)} per core; ` +
            MODES.map(
              (m) =>
                `${MODE_LABEL[m]} ${results[m].tap.overBound} entries ≥ bound, longest ${results[m].tap.longest.us} µs (${results[m].tap.longest.command})`,
            ).join('; '),
        },
        no5xx(phases),
        answeredOk(phases),
      ],
      raw: byMode((m) => ({
        seed: results[m].seed,
        comparison: results[m].comparison,
        likers: results[m].likers,
        likeKeys: results[m].likeKeys,
        seenKeys: results[m].seenKeys,
        countedPlays: results[m].countedPlays,
        latency: results[m].latency,
        loadPerCore: results[m].loadPerCore,
        okByKind: figures[m].ok,
        scripts: Object.fromEntries(results[m].tap.byCommand),
        longest: results[m].tap.longest,
        drainMs: results[m].drainMs,
        ...(summarize(phases[m]) as object),
      })),
    }
  },
}
