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
    await Promise.all(Array.from({ length: concurrency }, caller))
    if (!record) return
    this.elapsedMs += performance.now() - started
    const used = process.cpuUsage(cpu)
    this.cpuUs += used.user + used.system
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
    }
  }
}
