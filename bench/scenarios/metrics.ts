import { benchIp } from './context.js'

/** What the bench reads from every instance's /metrics each second. */
export interface Scrape {
  /** Sum of `db_queries_total` (statements the instances ran). */
  dbQueries: number
  /** Oldest pending or undelivered interaction event (s), max over instances. */
  flushLagS: number
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
  let dbQueries = 0
  let flushLagS = 0
  for (const text of texts) {
    for (const line of text.split('\n')) {
      if (line.startsWith('db_queries_total ')) dbQueries += Number(line.slice('db_queries_total '.length))
      const m =
        /^floodgate_interactions_flush_oldest_(?:pending|undelivered)_age_seconds(?:\{[^}]*\})? (\S+)$/.exec(
          line,
        )
      if (m) flushLagS = Math.max(flushLagS, Number(m[1]))
    }
  }
  return { dbQueries, flushLagS }
}
