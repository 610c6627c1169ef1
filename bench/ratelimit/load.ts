import hdr from 'hdr-histogram-js'

/** One scenario's outcome: decisions per second and latency percentiles (ms). */
export interface LoadResult {
  name: string
  ops: number
  opsPerSec: number
  p50Ms: number
  p99Ms: number
  /** Client-process CPU time (user + system) per decision, µs: the library's own overhead. */
  cpuUsPerOp: number
  errors: number
  /** Median over the measured slices of decisions/s and of client CPU µs/decision (robust to a noisy neighbour). */
  medianOpsPerSec: number
  medianCpuUsPerOp: number
  /** Decisions/s of each measured slice, in order (rounds), for per-round ratios. */
  sliceOpsPerSec: number[]
}

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/**
 * A scenario measured in several slices (interleaved with other scenarios so machine noise
 * spreads evenly): ops, errors and latencies (µs, HdrHistogram, 3 significant digits) add up.
 */
export class Scenario {
  readonly name: string
  private readonly op: (i: number) => Promise<unknown>
  private readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  })
  private ops = 0
  private errors = 0
  private elapsedMs = 0
  private cpuUs = 0
  private counter = 0
  private readonly sliceOps: number[] = []
  private readonly sliceCpu: number[] = []

  constructor(name: string, op: (i: number) => Promise<unknown>) {
    this.name = name
    this.op = op
  }

  /** Closed loop: `concurrency` callers await `op()` back to back for `durationMs`. */
  async slice(concurrency: number, durationMs: number, record = true): Promise<void> {
    const cpu = process.cpuUsage()
    const started = performance.now()
    const endAt = started + durationMs
    const caller = async () => {
      while (performance.now() < endAt) {
        const t0 = performance.now()
        try {
          await this.op(this.counter++)
        } catch {
          if (record) this.errors++
        }
        if (!record) continue
        this.histogram.recordValue(Math.max(1, Math.round((performance.now() - t0) * 1000)))
        this.ops++
      }
    }
    const opsBefore = this.ops
    await Promise.all(Array.from({ length: concurrency }, caller))
    if (!record) return
    const elapsedMs = performance.now() - started
    this.elapsedMs += elapsedMs
    const used = process.cpuUsage(cpu)
    this.cpuUs += used.user + used.system
    const ops = this.ops - opsBefore
    this.sliceOps.push(ops / (elapsedMs / 1000))
    this.sliceCpu.push((used.user + used.system) / ops)
  }

  result(): LoadResult {
    return {
      name: this.name,
      ops: this.ops,
      opsPerSec: Math.round(this.ops / (this.elapsedMs / 1000)),
      p50Ms: this.histogram.getValueAtPercentile(50) / 1000,
      p99Ms: this.histogram.getValueAtPercentile(99) / 1000,
      cpuUsPerOp: Math.round((this.cpuUs / this.ops) * 10) / 10,
      errors: this.errors,
      medianOpsPerSec: Math.round(median(this.sliceOps)),
      medianCpuUsPerOp: Math.round(median(this.sliceCpu) * 10) / 10,
      sliceOpsPerSec: this.sliceOps.map((v) => Math.round(v)),
    }
  }
}
