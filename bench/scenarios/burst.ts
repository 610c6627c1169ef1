import {
  absentIdsGated,
  admittedWithinQuota,
  type BurstFigures,
  coldBurstBounded,
  noFailures,
  per1k,
} from './burst_invariants.js'
import { bearer, benchIp, type Context } from './context.js'
import { burst as warmUp } from './load.js'
import { type Scrape, scrape } from './metrics.js'
import type { ModeDeployment, ModeName } from './modes.js'
import { type PhaseResult, runPhase, type TrafficClass } from './phase.js'
import { sleep } from './processes.js'
import { type PolicyQuota, probeQuota } from './quota_probe.js'
import type { Recorder } from './recorder.js'
import {
  byMode,
  cpuMsPerRequest,
  forEachMode,
  latencyLine,
  modeSeries,
  type Scenario,
  slidingWindowBound,
  summarize,
} from './scenario.js'

/** Videos read before the bursts (ranks 2…), so the instances' code paths are warm (JIT, pools). */
const WARM_READS = 200

const PHASES = ['cold', 'absent', 'quota'] as const
type PhaseName = (typeof PHASES)[number]

/** A burst is over for the database when no instance ran a statement for this long (ms). */
const SETTLE_MS = 500

/** Scrapes until `db_queries_total` stayed the same for SETTLE_MS, at most `maxMs`; the last scrape. */
async function settled(d: ModeDeployment, maxMs: number): Promise<Scrape> {
  const deadline = performance.now() + maxMs
  let last = await scrape(d.bases)
  for (;;) {
    await sleep(SETTLE_MS)
    const now = await scrape(d.bases)
    if (now.dbQueries === last.dbQueries || performance.now() > deadline) return now
    last = now
  }
}

interface MeasuredBurst {
  phase: PhaseResult
  /** Statements from before the burst until the instances settled: those of requests answered after its deadline too. */
  dbStatements: number
}

async function measuredBurst(ctx: Context, d: ModeDeployment, c: TrafficClass): Promise<MeasuredBurst> {
  // from a quiet deployment: a restarted instance's Bloom rebuild from PostgreSQL may still be running
  const before = await settled(d, 1000 * ctx.params.burstMaxS)
  const phase = await runPhase(d, { durationS: ctx.params.burstMaxS, classes: [c] })
  const after = await settled(d, 1000 * ctx.params.burstMaxS)
  return { phase, dbStatements: after.dbQueries - before.dbQueries }
}

/** DB statements of one GET of `path` on a quiet deployment (`db_queries_total` around it). */
async function statementsOfOneRead(d: ModeDeployment, path: string): Promise<number> {
  const before = await scrape(d.bases)
  const res = await fetch(`${d.bases[0]}${path}`, { headers: { 'x-forwarded-for': benchIp() } })
  await res.arrayBuffer()
  return (await scrape(d.bases)).dbQueries - before.dbQueries
}

/** A closed-loop burst: `requests` in all, min(in flight, requests) connections, at most burstMaxS. */
function closedBurst(ctx: Context, name: string, requests: number, next: TrafficClass['next']): TrafficClass {
  const p = ctx.params
  return {
    name,
    connections: Math.min(p.burstInFlight, requests),
    amount: requests,
    durationS: p.burstMaxS,
    next,
  }
}

/** Counts reads answered from PostgreSQL because Redis did not answer in time (or failed), any reason. */
const staleCountsReads = (phase: PhaseResult) =>
  Object.entries(phase.floodgateEvents)
    .filter(([name]) => name.startsWith('floodgate_counters_stale_reads_total'))
    .reduce((n, [, d]) => n + d, 0)

const statuses = (r: Recorder) =>
  [
    ...Object.entries(r.statuses).map(([code, n]) => `${code}: ${n}`),
    ...(r.total.errors ? [`error: ${r.total.errors}`] : []),
    ...(r.unanswered ? [`in flight at the deadline: ${r.unanswered}`] : []),
  ].join(', ')

/**
 * Burst: the service's defaults (`defaults` profile: no timeout overrides), closed loop with
 * ~1,000 requests in flight over the instances, three bursts per mode: (a) thousands of GETs of
 * one uncached video (the hottest), (b) thousands of GETs of distinct ids that do not exist,
 * (c) one user's 3 × its quota (the per-user quota the service applies, read from its
 * RateLimit-Policy field) of GETs of a cached video. Reads (a) and (b) come from fresh addresses
 * (many clients behind a proxy), so no per-address quota applies.
 */
export const burst: Scenario = {
  id: 'burst',
  profile: 'defaults',
  async run(ctx: Context) {
    const p = ctx.params
    const hot = `/videos/${ctx.idsByRank[0]}`
    const missing = () => `/videos/${ctx.missingIdFloor + BigInt(Math.floor(Math.random() * 1e12))}`
    // users no other scenario reads as (the abusive client is the last one)
    const token = `Bearer ${bearer(ctx, ctx.userIds.at(-2)!)}`
    const probeToken = `Bearer ${bearer(ctx, ctx.userIds.at(-3)!)}`
    const manyClients = () => ({ 'x-forwarded-for': benchIp() })
    const results = await forEachMode(
      ctx,
      'burst',
      async (mode) => {
        const d = ctx.deployments[mode]
        await d.clearCache()
        const warm = ctx.idsByRank.slice(1, 1 + WARM_READS).map((id) => `/videos/${id}`)
        await warmUp(d.bases, warm, 16)
        const statementsPerLoad = await statementsOfOneRead(d, `/videos/${ctx.idsByRank.at(-1)}`)
        const quota: PolicyQuota = await probeQuota(d.bases[0]!, warm[0]!, { authorization: probeToken })
        const run = (c: TrafficClass) => measuredBurst(ctx, d, c)
        const bursts: Record<PhaseName, MeasuredBurst> = {
          cold: await run(
            closedBurst(ctx, 'burst', p.burstRequests, () => ({
              method: 'GET',
              path: hot,
              headers: manyClients(),
            })),
          ),
          absent: await run(
            closedBurst(ctx, 'burst', p.burstRequests, () => ({
              method: 'GET',
              path: missing(),
              headers: manyClients(),
            })),
          ),
          quota: await run(
            closedBurst(ctx, 'burst', 3 * quota.limit, () => ({
              method: 'GET',
              path: hot,
              headers: { authorization: token },
            })),
          ),
        }
        const phases = {
          cold: bursts.cold.phase,
          absent: bursts.absent.phase,
          quota: bursts.quota.phase,
        }
        return { phases, bursts, statementsPerLoad, quota }
      },
      this.profile,
    )
    const rec = (m: ModeName, phase: PhaseName) => results[m].phases[phase].recorders.burst!
    const figures = byMode((m): BurstFigures => {
      const { phases, quota } = results[m]
      const of = (phase: PhaseName) => ({
        requests: rec(m, phase).sent,
        dbStatements: results[m].bursts[phase].dbStatements,
        failed: rec(m, phase).total.serverErrors + rec(m, phase).total.errors,
      })
      return {
        instances: ctx.deployments[m].bases.length,
        statementsPerLoad: results[m].statementsPerLoad,
        cold: of('cold'),
        absent: of('absent'),
        quota: {
          ...of('quota'),
          admitted: rec(m, 'quota').total.ok,
          bound: slidingWindowBound(quota.limit, 1000 * phases.quota.elapsedS, quota.windowMs),
        },
      }
    })
    const latency = (m: ModeName, phase: PhaseName) => {
      const pc = rec(m, phase).percentiles()
      return `${pc.p50} / ${pc.p99}`
    }
    const perPhase = (fn: (phase: PhaseResult) => number | string) => (m: ModeName) =>
      PHASES.map((phase) => fn(results[m].phases[phase])).join(' / ')
    const rows = byMode((m) => {
      const f = figures[m]
      const q = results[m].quota
      return [
        per1k(f.cold.dbStatements, f.cold.requests),
        statuses(rec(m, 'cold')),
        latency(m, 'cold'),
        per1k(f.absent.dbStatements, f.absent.requests),
        statuses(rec(m, 'absent')),
        latency(m, 'absent'),
        `${f.quota.admitted} / ${q.limit} (bound ${f.quota.bound})`,
        statuses(rec(m, 'quota')),
        latency(m, 'quota'),
        perPhase(staleCountsReads)(m),
        perPhase((phase) => Math.round(1000 * phase.eventLoopMaxS))(m),
        perPhase(cpuMsPerRequest)(m),
        perPhase((phase) => phase.elapsedS.toFixed(1))(m),
      ]
    })
    const f = figures.floodgate
    const q = results.floodgate.quota
    return {
      id: this.id,
      title: 'Burst (service defaults)',
      description:
        `The instances run with the service's defaults (no timeout overrides; TRUST_PROXY=true so the ` +
        `bench speaks for many clients), ${p.instances} per mode, restarted for this scenario (empty L1), ` +
        `cache emptied, ${WARM_READS} other videos read first (warm code paths). Three closed-loop bursts, ` +
        `${p.burstInFlight} requests in flight over the instances (fewer when the burst is smaller), each ` +
        `stopped after ${p.burstMaxS} s: (a) cold: ${p.burstRequests} GETs of the hottest video, uncached; ` +
        `(b) absent: ${p.burstRequests} GETs of distinct ids that do not exist; (a) and (b) from a fresh ` +
        `address each (no per-address quota applies); (c) quota: one user's 3 × quota GETs of the now ` +
        `cached video, the quota being what the service answers in RateLimit-Policy (floodgate: ` +
        `"${q.name}" ${q.limit} per ${q.windowMs / 1000} s, the default per-user quota). DB statements = ` +
        '`db_queries_total` deltas; "one cold read" = the statements of one lone GET of an uncached ' +
        `video before the bursts (floodgate ${f.statementsPerLoad}); a burst's statements are counted until ` +
        `no instance ran one for ${SETTLE_MS} ms after it (answers after its deadline included), per ` +
        '1,000 requests sent. "error": no answer within autocannon\'s 10 s or a socket error. ' +
        'Latencies as measured (closed loop: ' +
        'no coordinated-omission correction applies). Admitted bound: limit × (1 + burst time / window). ' +
        '"Stale counts reads" = responses whose like/play counts came from PostgreSQL (one statement each) ' +
        'because the Redis counts read failed or timed out (floodgate_counters_stale_reads_total). ' +
        'Three figures a/b/c = the cold, absent and quota bursts.',
      columns: [
        'cold: DB st. per 1k req',
        'cold: statuses',
        'cold: p50 / p99 ms',
        'absent: DB st. per 1k req',
        'absent: statuses',
        'absent: p50 / p99 ms',
        'quota: admitted / quota',
        'quota: statuses',
        'quota: p50 / p99 ms',
        'stale counts reads a/b/c',
        'event-loop max ms a/b/c',
        'service CPU ms/req a/b/c',
        'burst s a/b/c',
      ],
      rows,
      chart: {
        title: 'Burst with the service defaults (closed loop)',
        xLabel: 'seconds',
        panels: [
          {
            title: 'Cold-video burst: DB statements per second',
            yLabel: 'statements/s',
            series: modeSeries(byMode((m) => results[m].phases.cold.dbPerSecond)),
          },
          {
            title: 'Absent-id burst: DB statements per second',
            yLabel: 'statements/s',
            series: modeSeries(byMode((m) => results[m].phases.absent.dbPerSecond)),
          },
          {
            title: 'Cold-video burst: latency p99 (solid) and p50 (dashed)',
            yLabel: 'ms',
            logY: true,
            series: [
              ...modeSeries(byMode((m) => latencyLine(results[m].phases.cold, 'burst', 'p99'))),
              ...modeSeries(
                byMode((m) => latencyLine(results[m].phases.cold, 'burst', 'p50')),
                { dashed: true, suffix: ' p50' },
              ),
            ],
          },
        ],
      },
      invariants: [coldBurstBounded(f), absentIdsGated(f), admittedWithinQuota(figures), noFailures(f)],
      raw: byMode((m) => ({
        figures: figures[m],
        quota: results[m].quota,
        ...Object.fromEntries(PHASES.map((phase) => [phase, summarize(results[m].phases[phase])])),
      })),
    }
  },
}
