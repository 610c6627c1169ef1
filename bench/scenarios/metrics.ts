import { benchIp } from './context.js'

/** Upper bounds (s) of video-api's `http_request_duration_seconds` buckets, `+Inf` last. */
export type Buckets = Map<number, number>

/** What the bench reads from every instance's /metrics each second. */
export interface Scrape {
  /** Sum of `db_queries_total` (statements the instances ran). */
  dbQueries: number
  /** Oldest pending or undelivered interaction event (s), max over instances. */
  flushLagS: number
  /** Sum of `process_cpu_seconds_total` (user + system CPU of the instances, s). */
  cpuS: number
  /** Longest event-loop delay (s) since the previous scrape, max over instances (`nodejs_eventloop_lag_max_seconds`). */
  eventLoopMaxS: number
  /** Cumulative `http_request_duration_seconds_bucket` of `GET /videos/:id`, summed over instances and statuses (le in s → count). */
  videoReadBuckets: Buckets
  /** floodgate's counters (`floodgate_*_total`, e.g. cache outcomes, stale counts reads), summed over instances, by name and labels. */
  floodgateCounters: Record<string, number>
}

/** Parses one instance's /metrics text into a {@link Scrape} (sums; maxima for lag). */
export function parseMetrics(texts: readonly string[]): Scrape {
  const out: Scrape = {
    dbQueries: 0,
    flushLagS: 0,
    cpuS: 0,
    eventLoopMaxS: 0,
    videoReadBuckets: new Map(),
    floodgateCounters: {},
  }
  const value = (line: string) => Number(line.slice(line.lastIndexOf(' ') + 1))
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (line.startsWith('db_queries_total ')) out.dbQueries += value(line)
      else if (line.startsWith('process_cpu_seconds_total ')) out.cpuS += value(line)
      else if (line.startsWith('nodejs_eventloop_lag_max_seconds '))
        out.eventLoopMaxS = Math.max(out.eventLoopMaxS, value(line))
      else if (line.startsWith('http_request_duration_seconds_bucket{')) {
        if (!line.includes('method="GET"') || !line.includes('route="/videos/:id"')) continue
        const le = /le="([^"]+)"/.exec(line)?.[1]
        if (le === undefined) continue
        const bound = le === '+Inf' ? Infinity : Number(le)
        out.videoReadBuckets.set(bound, (out.videoReadBuckets.get(bound) ?? 0) + value(line))
      } else if (/^floodgate_\w+_total[{ ]/.test(line)) {
        const name = line.slice(0, line.lastIndexOf(' '))
        out.floodgateCounters[name] = (out.floodgateCounters[name] ?? 0) + value(line)
      } else {
        const m =
          /^floodgate_interactions_flush_oldest_(?:pending|undelivered)_age_seconds(?:\{[^}]*\})? (\S+)$/.exec(
            line,
          )
        if (m) out.flushLagS = Math.max(out.flushLagS, Number(m[1]))
      }
    }
  }
  return out
}

/** Scrapes /metrics of every instance (an instance that does not answer counts 0 this time). */
export async function scrape(bases: readonly string[]): Promise<Scrape> {
  const texts = await Promise.all(
    bases.map((b) =>
      fetch(`${b}/metrics`, {
        signal: AbortSignal.timeout(2000),
        headers: { 'x-forwarded-for': benchIp() },
      }).then(
        (r) => r.text(),
        () => '',
      ),
    ),
  )
  return parseMetrics(texts)
}

/**
 * Server-side latency of `GET /videos/:id` between two scrapes, from the cumulative buckets:
 * the share of answers slower than each bucket bound, and the bucket bound (s) under which 99%
 * of answers fell (`Infinity` when more than 1% took longer than the largest bound).
 */
export function bucketDelta(
  before: Buckets,
  after: Buckets,
): { count: number; p99UpperS: number; slowerThan: Record<string, number> } {
  const bounds = [...after.keys()].sort((a, b) => a - b)
  const delta = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0))
  const count = delta.at(-1) ?? 0
  const slowerThan: Record<string, number> = {}
  let p99UpperS = Infinity
  for (const [i, b] of bounds.entries()) {
    if (b === Infinity) continue
    slowerThan[String(b)] = count ? (count - delta[i]!) / count : 0
    if (p99UpperS === Infinity && count && delta[i]! >= 0.99 * count) p99UpperS = b
  }
  return { count, p99UpperS, slowerThan }
}

/** The counters that grew between two scrapes, by how much (a counter absent before counts from 0). */
export function counterDelta(
  before: Record<string, number>,
  after: Record<string, number>,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after)
      .map(([name, n]) => [name, n - (before[name] ?? 0)] as const)
      .filter(([, d]) => d > 0),
  )
}
