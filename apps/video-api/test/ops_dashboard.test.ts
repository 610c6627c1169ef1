import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { createTestApp, type TestApp } from './support/app.js'
import { exposition, type Selector, selectors } from './support/promql.js'
import { deleteByPrefix } from './support/redis.js'

// The Grafana dashboard and the Prometheus alert rules of ops/ query only series that a running app
// exports on /metrics, with labels (and label values) it really uses.
const ops = new URL('../ops/', import.meta.url)
const dashboard = JSON.parse(readFileSync(new URL('grafana/video-api.json', ops), 'utf8')) as {
  panels: { type: string; title: string; targets?: { expr: string }[] }[]
}
const rules = parse(readFileSync(new URL('prometheus/alerts.yml', ops), 'utf8')) as {
  groups: { rules: { alert: string; expr: string }[] }[]
}
/** Series Prometheus writes itself, and the labels it adds to every scraped series. */
const FROM_PROMETHEUS = new Set(['up'])
const TARGET_LABELS = new Set(['job', 'instance'])

let t: TestApp
let samples: Map<string, Record<string, string>[]>

beforeAll(async () => {
  t = await createTestApp('opsdash', {
    cache: true,
    interactionFlush: true,
    rateLimit: {
      prefix: `vatest-opsdash-rl-${process.pid}`,
      quotas: {
        user: { limit: 100, windowMs: 60_000 },
        anonymous: { limit: 2, windowMs: 60_000 },
        write: { limit: 100, windowMs: 60_000 },
        auth: { limit: 100, windowMs: 60_000 },
        routes: {},
      },
      fallback: 'failClosed',
      timeoutMs: 10_000,
    },
  })
  // some traffic, a 429 among it, so the request histogram has its status labels
  for (let i = 0; i < 3; i++)
    await t.app.inject({ method: 'GET', url: '/videos/1', remoteAddress: '192.0.2.9' })
  samples = exposition((await t.app.inject({ method: 'GET', url: '/metrics' })).body)
})
afterAll(async () => {
  await deleteByPrefix(t.redis, `vatest-opsdash-rl-${process.pid}:`)
  await t.close()
})

function problems(where: string, expr: string): string[] {
  const found: string[] = []
  const list: Selector[] = selectors(expr)
  if (list.length === 0) found.push(`${where}: no metric found in ${expr}`)
  for (const { metric, matchers } of list) {
    if (FROM_PROMETHEUS.has(metric)) continue
    const series = samples.get(metric)
    if (!series) {
      found.push(`${where}: ${metric} is not on /metrics`)
      continue
    }
    // declared without samples yet: the name is right, its labels cannot be checked until first use
    if (series.length === 0) continue
    for (const { label, op, value } of matchers) {
      if (TARGET_LABELS.has(label)) continue
      const values = new Set(series.map((s) => s[label]).filter((v) => v !== undefined))
      if (values.size === 0) found.push(`${where}: ${metric} has no label ${label}`)
      // literal values (and alternations of literals) must be ones the service really exports
      const literals = op === '=' ? [value] : op === '=~' && /^[\w|]+$/.test(value) ? value.split('|') : []
      for (const literal of literals)
        if (!values.has(literal)) found.push(`${where}: ${metric}{${label}="${literal}"} is not on /metrics`)
    }
  }
  return found
}

describe('ops/ dashboard and alerts', () => {
  it('every dashboard query reads series the app exports', () => {
    const exprs = dashboard.panels.flatMap((p) =>
      (p.targets ?? []).map((target) => ({ p, expr: target.expr })),
    )
    expect(exprs.length).toBeGreaterThan(10)
    expect(exprs.flatMap(({ p, expr }) => problems(`panel "${p.title}"`, expr))).toEqual([])
  })

  it('every alert rule reads series the app exports', () => {
    const all = rules.groups.flatMap((g) => g.rules)
    expect(all.length).toBeGreaterThan(5)
    expect(all.flatMap((rule) => problems(`alert ${rule.alert}`, rule.expr))).toEqual([])
  })

  it('the checker catches a misspelt series and a label value the app never exports', () => {
    expect(problems('x', 'rate(http_requests_total[5m])')).toEqual([
      'x: http_requests_total is not on /metrics',
    ])
    expect(problems('x', 'floodgate_cache_events_total{outcome="l3_hit"}')).toEqual([
      'x: floodgate_cache_events_total{outcome="l3_hit"} is not on /metrics',
    ])
  })
})

describe('PromQL selectors', () => {
  it('skips functions, keywords, grouping labels, ranges and numbers', () => {
    const expr =
      'histogram_quantile(0.99, sum by (le, route) (rate(a_bucket{job=~"$job",x="1"}[$__rate_interval]))) / on (job) b > 1e3 and c offset 5m'
    expect(selectors(expr).map((s) => s.metric)).toEqual(['a_bucket', 'b', 'c'])
    expect(selectors(expr)[0]!.matchers).toEqual([
      { label: 'job', op: '=~', value: '$job' },
      { label: 'x', op: '=', value: '1' },
    ])
  })
})
