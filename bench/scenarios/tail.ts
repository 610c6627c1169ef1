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
 * showed a machine that does not stall that long. The bound is the bound itself, not the 500 ms
 * the reads take on a quiet machine: a read that sat out a lost wake-up or reply cannot come back
 * sooner than the bound, whatever the load, while on the shared 2-core box a stall alone holds
 * reads of every mode past it once the box is loaded enough.
 *
 * No cache is the witness of how far the machine (or PostgreSQL) stalled in this run: when its
 * own max reached the bound, or its p99 half of it (one plain read in 100 waiting 900 ms: stalls
 * on that scale hold some read twice as long), this run cannot tell a sat-out wait from a stall,
 * and nothing is blamed on floodgate (the detail says so). Measured on this box: the penetration
 * runs that showed the lost wake-ups (load averages ~15–35) had no cache p99 320–807 ms and max
 * 552–1,702 ms, floodgate max 2,219–2,511 ms; the runs at load ~35–50, where every mode answered
 * a few dozen reads a second in places, had no cache p99 1,184–5,525 ms and floodgate max
 * 2,487–3,779 ms with no lock wait run out. The older design is no witness: its waiters poll up
 * to 2 s by design. Works on measured latencies (`uncorrectedPercentiles`): the corrected ones add
 * the requests a stalled connection held back, which are not reads anybody waited for.
 */
export function noReadSatOutAWait(tails: Record<ModeName, Percentiles>, what: string): Invariant {
  const slow = tails.floodgate.max >= WAIT_BOUND_MS
  const stalled = tails.none.max >= WAIT_BOUND_MS || tails.none.p99 >= WAIT_BOUND_MS / 2
  return {
    name: `${what}: floodgate's measured max < ${WAIT_BOUND_MS} ms, the read path's shortest wait bound (unless no cache shows the machine stalling as long)`,
    ok: !slow || stalled,
    detail:
      MODES.map(
        (m) => `${MODE_LABEL[m]} p99 ${tails[m].p99} ms, p99.9 ${tails[m].p999} ms, max ${tails[m].max} ms`,
      ).join('; ') +
      (slow && stalled
        ? ` (no cache's max reached ${WAIT_BOUND_MS} ms or its p99 ${WAIT_BOUND_MS / 2} ms: the machine or PostgreSQL stalled on that scale, this run cannot tell)`
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
