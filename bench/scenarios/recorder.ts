import * as hdr from 'hdr-histogram-js'

export type Histogram = ReturnType<typeof hdr.build>

/** A latency histogram in microseconds (1 µs … 60 s, 3 significant digits). */
export function newHistogram(): Histogram {
  return hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 60_000_000,
    numberOfSignificantValueDigits: 3,
  })
}

export interface Second {
  histogram: Histogram
  ok: number
  /** 429 answers (rate limited). */
  limited: number
  /** Other 4xx answers. */
  clientErrors: number
  /** 5xx answers. */
  serverErrors: number
  /** Socket errors and timeouts (no answer). */
  errors: number
}

export interface Percentiles {
  p50: number
  p99: number
  p999: number
  max: number
}

/** Latencies (hdr-histogram-js) and status classes of one traffic class, per second since `t0` and in total. */
export class Recorder {
  readonly seconds: Second[] = []
  readonly total: Omit<Second, 'histogram'> = {
    ok: 0,
    limited: 0,
    clientErrors: 0,
    serverErrors: 0,
    errors: 0,
  }
  readonly histogram = newHistogram()

  constructor(private readonly t0: number) {}

  private second(): Second {
    const i = Math.max(0, Math.floor((performance.now() - this.t0) / 1000))
    while (this.seconds.length <= i)
      this.seconds.push({
        histogram: newHistogram(),
        ok: 0,
        limited: 0,
        clientErrors: 0,
        serverErrors: 0,
        errors: 0,
      })
    return this.seconds[i]!
  }

  response(status: number, latencyMs: number): void {
    const s = this.second()
    const us = Math.max(1, Math.round(latencyMs * 1000))
    s.histogram.recordValue(us)
    this.histogram.recordValue(us)
    const field =
      status < 400 ? 'ok' : status === 429 ? 'limited' : status < 500 ? 'clientErrors' : 'serverErrors'
    s[field]++
    this.total[field]++
  }

  error(): void {
    this.second().errors++
    this.total.errors++
  }

  get requests(): number {
    const t = this.total
    return t.ok + t.limited + t.clientErrors + t.serverErrors + t.errors
  }

  /** Percentiles (ms) over the whole run. */
  percentiles(): Percentiles {
    return percentilesOf(this.histogram)
  }

  /** Per second: [second, requests, p50, p99, p99.9 (ms)]. */
  timeline(): Array<{ t: number; requests: number; ok: number; errors: number } & Percentiles> {
    return this.seconds.map((s, t) => ({
      t,
      requests: s.ok + s.limited + s.clientErrors + s.serverErrors + s.errors,
      ok: s.ok,
      errors: s.serverErrors + s.errors,
      ...percentilesOf(s.histogram),
    }))
  }
}

export function percentilesOf(h: Histogram): Percentiles {
  if (h.totalCount === 0) return { p50: 0, p99: 0, p999: 0, max: 0 }
  const ms = (us: number) => Math.round(us) / 1000
  return {
    p50: ms(h.getValueAtPercentile(50)),
    p99: ms(h.getValueAtPercentile(99)),
    p999: ms(h.getValueAtPercentile(99.9)),
    max: ms(h.maxValue),
  }
}
