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

/**
 * Expected interval (ms) between two requests of one connection when `connections` share an offered
 * `rate` (req/s) evenly: connections / rate. The coordinated-omission correction uses it (see
 * {@link Recorder.response}). `undefined` for a closed loop (no rate): nothing to correct against.
 * @throws {RangeError} when connections < 1 or rate ≤ 0.
 */
export function expectedIntervalMs(connections: number, rate: number | undefined): number | undefined {
  if (rate === undefined) return undefined
  if (!(connections >= 1) || !(rate > 0))
    throw new RangeError(`need connections ≥ 1 and rate > 0, got ${connections} and ${rate}`)
  return (1000 * connections) / rate
}

/**
 * Latencies (hdr-histogram-js) and status classes of one traffic class, per second since `t0` and in total.
 * Latencies are corrected for coordinated omission when the caller gives the expected interval
 * (`seconds[].histogram`, `histogram`); the measured ones stay in `uncorrected`.
 */
export class Recorder {
  readonly seconds: Second[] = []
  readonly total: Omit<Second, 'histogram'> = {
    ok: 0,
    limited: 0,
    clientErrors: 0,
    serverErrors: 0,
    errors: 0,
  }
  /** Every answer's latency, corrected for coordinated omission (µs). */
  readonly histogram = newHistogram()
  /** Every answer's latency as measured (µs): a lower bound of what a user at the offered rate sees. */
  readonly uncorrected = newHistogram()
  /** Answers by HTTP status code. */
  readonly statuses: Record<number, number> = {}
  /** Requests the load generator sent (counted when a load ends; 0 until then). */
  sent = 0
  /** When the first answered request was sent, and when the last answer came (`performance.now()` ms). */
  private firstSentAtMs = Number.POSITIVE_INFINITY
  private lastAnsweredAtMs = Number.NEGATIVE_INFINITY

  constructor(private readonly t0: number) {}

  private second(now = performance.now()): Second {
    const i = Math.max(0, Math.floor((now - this.t0) / 1000))
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

  /**
   * One answer: its status and latency (ms). With `expectedIntervalMs` (the time between two
   * requests of one connection at the offered rate, {@link expectedIntervalMs}) the latency is
   * corrected for coordinated omission: a connection that waited `latencyMs` > interval would have
   * sent requests meanwhile, at the offered rate, that would have waited latency − interval,
   * latency − 2 × interval, … down to the interval, so those are recorded too. That is
   * HdrHistogram's `recordValueWithExpectedInterval` (hdr-histogram-js, JsHistogram; documented in
   * HdrHistogram's AbstractHistogram javadoc, https://hdrhistogram.github.io/HdrHistogram/JavaDoc/),
   * the after-the-fact form of the correction wrk2 builds in by measuring from each request's
   * intended send time (https://github.com/giltene/wrk2, README: "Coordinated Omission").
   */
  response(status: number, latencyMs: number, expectedIntervalMs?: number): void {
    const now = performance.now()
    this.firstSentAtMs = Math.min(this.firstSentAtMs, now - latencyMs)
    this.lastAnsweredAtMs = Math.max(this.lastAnsweredAtMs, now)
    const s = this.second(now)
    const us = Math.max(1, Math.round(latencyMs * 1000))
    const intervalUs = expectedIntervalMs === undefined ? 0 : Math.round(expectedIntervalMs * 1000)
    this.uncorrected.recordValue(us)
    if (intervalUs > 0) {
      s.histogram.recordValueWithExpectedInterval(us, intervalUs)
      this.histogram.recordValueWithExpectedInterval(us, intervalUs)
    } else {
      s.histogram.recordValue(us)
      this.histogram.recordValue(us)
    }
    const field =
      status < 400 ? 'ok' : status === 429 ? 'limited' : status < 500 ? 'clientErrors' : 'serverErrors'
    s[field]++
    this.total[field]++
    this.statuses[status] = (this.statuses[status] ?? 0) + 1
  }

  error(): void {
    this.second().errors++
    this.total.errors++
  }

  /**
   * Time (ms) from the first answered request's send to the last answer: how long this class's
   * requests could be decided on, which the load generator's nominal duration only approximates
   * (autocannon checks it once a second). 0 before any answer.
   */
  get spanMs(): number {
    return Number.isFinite(this.firstSentAtMs) ? this.lastAnsweredAtMs - this.firstSentAtMs : 0
  }

  /** Requests sent that got neither an answer nor an error: still in flight when the load stopped. */
  get unanswered(): number {
    return Math.max(0, this.sent - this.requests)
  }

  get requests(): number {
    const t = this.total
    return t.ok + t.limited + t.clientErrors + t.serverErrors + t.errors
  }

  /** Percentiles (ms) over the whole run, corrected for coordinated omission when the load had a rate. */
  percentiles(): Percentiles {
    return percentilesOf(this.histogram)
  }

  /** Percentiles (ms) over the whole run as measured (no correction). */
  uncorrectedPercentiles(): Percentiles {
    return percentilesOf(this.uncorrected)
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
