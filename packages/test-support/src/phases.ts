/** One stretch of a fault-injection run, in ms since the run's start. */
export interface Phase {
  name: string
  fromMs: number
  toMs: number
}

/**
 * Cuts a run at `marks` (ms since its start, ascending) into consecutive phases named `names`
 * (one more name than marks: the last phase runs to `endMs`), and sorts each sample into the
 * phase its answer came in (`atMs + ms`): a call in flight at a fault belongs to the fault.
 */
export function byPhase<S extends { atMs: number; ms: number }>(
  samples: readonly S[],
  names: readonly string[],
  marks: readonly number[],
  endMs: number,
): { phase: Phase; samples: S[] }[] {
  const bounds = [0, ...marks, endMs]
  return names.map((name, i) => {
    const phase = { name, fromMs: bounds[i]!, toMs: bounds[i + 1]! }
    const answered = (s: S) => s.atMs + s.ms >= phase.fromMs && s.atMs + s.ms < phase.toMs
    return { phase, samples: samples.filter(answered) }
  })
}

/** The phases of a master failover test (issue 29). */
export const FAILOVER_PHASES = [
  'before the kill',
  'until the promotion',
  'until the replica is back',
  'after',
]
