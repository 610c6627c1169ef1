import type { FastifyInstance } from 'fastify'

/**
 * The samples of a Prometheus text exposition (`/metrics`), keyed by series exactly as printed:
 * `name` or `name{label="value",…}`. Comment lines and non-numeric values are skipped.
 */
export function metricSamples(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    const value = Number(line.slice(at + 1))
    if (at > 0 && !Number.isNaN(value)) samples.set(line.slice(0, at), value)
  }
  return samples
}

/** {@link metricSamples} of a running instance's `GET <base>/metrics`. */
export async function scrapeMetrics(base: string): Promise<Map<string, number>> {
  return metricSamples(await (await fetch(`${base}/metrics`)).text())
}

/** `db_queries_total` of an app (statements it ran), read through `inject`. @throws when the series is missing. */
export async function dbQueries(app: FastifyInstance): Promise<number> {
  const samples = metricSamples((await app.inject({ method: 'GET', url: '/metrics' })).body)
  const count = samples.get('db_queries_total')
  if (count === undefined) throw new Error('db_queries_total missing from /metrics')
  return count
}
