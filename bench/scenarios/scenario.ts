import type { Chart, Series } from './chart/line_chart.js'
import type { Context } from './context.js'
import { MODE_COLOR, MODE_LABEL, MODES, type ModeName, type Profile } from './modes.js'
import type { PhaseResult } from './phase.js'

export interface Invariant {
  name: string
  ok: boolean
  detail: string
}

/** What a scenario hands the report: a summary table (one row per mode), a chart, raw data, invariants. */
export interface ScenarioResult {
  id: string
  title: string
  /** What was run, in one paragraph (markdown). */
  description: string
  columns: string[]
  rows: Record<ModeName, Array<string | number>>
  chart: Chart
  invariants: Invariant[]
  raw: Record<ModeName, unknown>
}

export interface Scenario {
  id: string
  /** The instances' settings the scenario runs with. @default 'bench' */
  profile?: Profile
  run(ctx: Context): Promise<ScenarioResult>
}

/** One line per mode from a per-mode series. */
export function modeSeries(
  values: Record<ModeName, number[]>,
  options: { dashed?: boolean; suffix?: string } = {},
): Series[] {
  return MODES.map((m) => ({
    name: `${MODE_LABEL[m]}${options.suffix ?? ''}`,
    color: MODE_COLOR[m],
    dashed: options.dashed,
    points: values[m].map((y, i) => [i + 1, y] as [number, number]),
  }))
}

/** Per-second latency percentile of the traffic class `name`. */
export function latencyLine(phase: PhaseResult, name: string, key: 'p50' | 'p99' | 'p999'): number[] {
  return (phase.recorders[name]?.timeline() ?? []).map((s) => s[key])
}

export const perSecond = (total: number, seconds: number) => Math.round(total / Math.max(1, seconds))

/** Fails when any answer was a 5xx (socket errors are reported separately). */
export function no5xx(phases: Record<ModeName, PhaseResult>, allowDuringOutage = false): Invariant {
  const counts = MODES.map((m) => {
    const total = Object.values(phases[m].recorders).reduce((s, r) => s + r.total.serverErrors, 0)
    return `${MODE_LABEL[m]} ${total}`
  })
  const bad = MODES.some((m) => Object.values(phases[m].recorders).some((r) => r.total.serverErrors > 0))
  return {
    name: allowDuringOutage ? 'no 5xx (reported; Redis outage scenario)' : 'no 5xx',
    ok: allowDuringOutage || !bad,
    detail: counts.join(', '),
  }
}

/** Runs `fn` for each mode in turn, its instances switched to `profile` first (a restart when they ran with another). */
export function forEachMode<T>(
  ctx: Context,
  title: string,
  fn: (mode: ModeName) => Promise<T>,
  profile: Profile = 'bench',
): Promise<Record<ModeName, T>> {
  return (async () => {
    const out = {} as Record<ModeName, T>
    for (const mode of MODES) {
      ctx.log(`${title}: ${MODE_LABEL[mode]}`)
      await ctx.deployments[mode].use(profile, ctx.log)
      out[mode] = await fn(mode)
    }
    return out
  })()
}

/** A record with one entry per mode. */
export function byMode<T>(fn: (mode: ModeName) => T): Record<ModeName, T> {
  return Object.fromEntries(MODES.map((m) => [m, fn(m)])) as Record<ModeName, T>
}

/** The raw JSON of a phase. */
export function summarize(phase: PhaseResult): unknown {
  return {
    durationS: phase.durationS,
    dbTotal: phase.dbTotal,
    dbPerSecond: phase.dbPerSecond,
    serviceCpuS: phase.serviceCpuS,
    serviceCpuMsPerRequest: cpuMsPerRequest(phase),
    elapsedS: phase.elapsedS,
    eventLoopMaxS: phase.eventLoopMaxS,
    serverVideoReads: phase.serverVideoReads,
    floodgateEvents: phase.floodgateEvents,
    samples: phase.samples,
    classes: Object.fromEntries(
      Object.entries(phase.recorders).map(([name, r]) => [
        name,
        {
          total: r.total,
          statuses: r.statuses,
          percentilesMs: r.percentiles(),
          uncorrectedPercentilesMs: r.uncorrectedPercentiles(),
          timeline: r.timeline(),
        },
      ]),
    ),
  }
}

/** CPU (ms) the mode's instances spent per answered request of the phase (every class together). */
export function cpuMsPerRequest(phase: PhaseResult): number {
  const requests = Object.values(phase.recorders).reduce((n, r) => n + r.requests, 0)
  return Math.round((100 * (1000 * phase.serviceCpuS)) / Math.max(1, requests)) / 100
}

/**
 * Most requests a sliding-window counter admits over `durationMs` (ms) to a key without earlier
 * requests: limit × (1 + duration / window), floored. A window admits c ≤ limit; the next, f of
 * its length in, admits limit − c × (1 − f), so the two together stay ≤ limit × (1 + f) with
 * f ≤ duration / window (sliding window counter: Cloudflare,
 * https://blog.cloudflare.com/counting-things-a-lot-of-different-things/).
 */
export function slidingWindowBound(limit: number, durationMs: number, windowMs: number): number {
  return Math.floor(limit * (1 + durationMs / windowMs))
}

/** Panel data: DB queries per second of each mode. */
export function dbSeries(phases: Record<ModeName, PhaseResult>): Series[] {
  return modeSeries(byMode((m) => phases[m].dbPerSecond))
}

/** Fails when a request got a 4xx other than 429 (every request of these scenarios is valid), or none succeeded. */
export function answeredOk(phases: Record<ModeName, PhaseResult>): Invariant {
  const bad = (m: ModeName) =>
    Object.values(phases[m].recorders).reduce((s, r) => s + r.total.clientErrors, 0)
  const ok = (m: ModeName) => Object.values(phases[m].recorders).reduce((s, r) => s + r.total.ok, 0)
  return {
    name: 'valid requests answered (no 4xx but 429, some 2xx)',
    ok: MODES.every((m) => bad(m) === 0 && ok(m) > 0),
    detail: MODES.map((m) => `${MODE_LABEL[m]} ${ok(m)} 2xx, ${bad(m)} other 4xx`).join(', '),
  }
}
