import { CACHE_DEFAULTS } from 'floodgate'
import { MODE_LABEL, MODES, type ModeName } from './modes.js'
import type { PhaseResult } from './phase.js'
import type { Percentiles } from './recorder.js'
import type { Invariant } from './scenario.js'

/**
 * The shortest bound a wait of the read path sits out when its wake-up or reply never comes, with
 * the service's defaults (ms): a lock waiter's jittered deadline, lockWaitMs − lockWaitJitterMs
 * (2,000 − 200); Redis waits give up later still (REDIS_MAX_WAIT_MS, 2,000). A read at least this
 * long sat out a whole wait, or met a machine (or PostgreSQL) stalled as long.
 */
export const WAIT_BOUND_MS = CACHE_DEFAULTS.lockWaitMs - CACHE_DEFAULTS.lockWaitJitterMs

/** The columns {@link measuredTail} fills: the measured (not corrected) p99.9 and max. */
export const MEASURED_TAIL_COLUMNS = ['p99.9 ms measured', 'max ms measured']

/** The measured p99.9 and max (ms) of traffic class `name` (0 when it has no answer). */
export function measuredTail(phase: PhaseResult, name: string): [number, number] {
  const tail = phase.recorders[name]?.uncorrectedPercentiles()
  return [tail?.p999 ?? 0, tail?.max ?? 0]
}

/**
 * floodgate's slowest read against {@link WAIT_BOUND_MS}: it fails when floodgate answered a read
 * after a whole wait bound while no cache, the same reads on PostgreSQL alone in the same run,
 * answered every read within it. The bound is the bound itself, not the 500 ms the reads take on
 * a quiet machine: on the shared 2-core box no cache's own measured max reached 0.5–1.7 s at load
 * averages of 15–20 (2.8–6 s at 35–50), and so does floodgate's when the box stalls, while a read
 * that sat out a lost wake-up or reply cannot come back sooner than the bound, whatever the load.
 * When no cache also had a read past the bound, the machine (or PostgreSQL) stalled that long in
 * this run, which then cannot tell a sat-out wait from a stall: nothing is blamed on floodgate and
 * the detail says so. The older design is no such witness: its waiters poll up to 2 s by design.
 * Works on measured latencies (`uncorrectedPercentiles`): the corrected ones add the requests a
 * stalled connection held back, which are not reads anybody waited for.
 */
export function noReadSatOutAWait(tails: Record<ModeName, Percentiles>, what: string): Invariant {
  const slow = tails.floodgate.max >= WAIT_BOUND_MS
  const stalled = tails.none.max >= WAIT_BOUND_MS
  return {
    name: `${what}: floodgate's measured max < ${WAIT_BOUND_MS} ms, the read path's shortest wait bound (unless no cache's was past it too)`,
    ok: !slow || stalled,
    detail:
      MODES.map((m) => `${MODE_LABEL[m]} p99.9 ${tails[m].p999} ms, max ${tails[m].max} ms`).join('; ') +
      (slow && stalled
        ? ' (no cache had a read past the bound too: the machine or PostgreSQL stalled that long, this run cannot tell)'
        : ''),
  }
}

/** {@link noReadSatOutAWait} of traffic class `name` of each mode's phase. */
export function readTailInvariant(
  phases: Record<ModeName, PhaseResult>,
  name: string,
  what: string,
): Invariant {
  const tails = Object.fromEntries(
    MODES.map((m) => [
      m,
      phases[m].recorders[name]?.uncorrectedPercentiles() ?? { p50: 0, p99: 0, p999: 0, max: 0 },
    ]),
  ) as Record<ModeName, Percentiles>
  return noReadSatOutAWait(tails, what)
}
