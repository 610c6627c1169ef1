import { Counter, Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { counterSeries, histogramSeries } from '../../src/metrics/bound_series.js'

const BUCKETS = [0.001, 0.01, 0.1, 1]

/** The same metrics twice: one fed through prom-client's API, one through bound series. */
function pair() {
  const make = () => {
    const registry = new Registry()
    const histogram = new Histogram({
      name: 'h_seconds',
      help: 'h',
      labelNames: ['route', 'status'],
      buckets: BUCKETS,
      registers: [registry],
    })
    const counter = new Counter({
      name: 'c_total',
      help: 'c',
      labelNames: ['outcome'],
      registers: [registry],
    })
    return { registry, histogram, counter }
  }
  return { plain: make(), bound: make() }
}

describe('bound series', () => {
  it('export exactly what observe and inc export, through reset and remove', async () => {
    const { plain, bound } = pair()
    const observeA = histogramSeries(bound.histogram, { route: '/a', status: '200' })
    const observeB = histogramSeries(bound.histogram, { route: '/b', status: '404' })
    const hit = counterSeries(bound.counter, { outcome: 'hit' })
    const values = [0.0004, 0.001, 0.003, 0.05, 0.5, 1, 7, 0.0999]
    const step = (value: number) => {
      plain.histogram.observe({ route: '/a', status: '200' }, value)
      observeA(value)
      plain.histogram.observe({ route: '/b', status: '404' }, value * 2)
      observeB(value * 2)
      plain.counter.inc({ outcome: 'hit' })
      hit()
    }
    for (const value of values) step(value)
    expect(await bound.registry.metrics()).toBe(await plain.registry.metrics())

    for (const { histogram, counter } of [plain, bound]) {
      histogram.remove('/a', '200')
      counter.reset()
    }
    for (const value of values) step(value)
    expect(await bound.registry.metrics()).toBe(await plain.registry.metrics())
    expect(await bound.registry.metrics()).toContain('c_total{outcome="hit"} 8')
  })

  it('refuse a value that is not a finite number, as observe does', () => {
    const { bound } = pair()
    const observe = histogramSeries(bound.histogram, { route: '/a', status: '200' })
    observe(0.01)
    expect(() => observe(Number.NaN)).toThrow(TypeError)
  })
})
