import hdr from 'hdr-histogram-js'

/** One scenario's outcome: decisions per second and latency percentiles (ms). */
export interface LoadResult {
  name: string
  ops: number
  opsPerSec: number
  p50Ms: number
  p99Ms: number
  errors: number
}

/**
 * Closed-loop load: `concurrency` callers each await `op()` back to back for `durationMs`;
 * latency recorded per call in µs (HdrHistogram, 3 significant digits).
 */
export async function closedLoop(
  name: string,
  op: (i: number) => Promise<unknown>,
  concurrency: number,
  durationMs: number,
): Promise<LoadResult> {
  const histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  })
  let ops = 0
  let errors = 0
  let counter = 0
  const started = performance.now()
  const endAt = started + durationMs
  const caller = async () => {
    while (performance.now() < endAt) {
      const t0 = performance.now()
      try {
        await op(counter++)
      } catch {
        errors++
      }
      histogram.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)))
      ops++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, caller))
  const elapsedS = (performance.now() - started) / 1000
  return {
    name,
    ops,
    opsPerSec: Math.round(ops / elapsedS),
    p50Ms: histogram.getValueAtPercentile(50) / 1000,
    p99Ms: histogram.getValueAtPercentile(99) / 1000,
    errors,
  }
}
