import { describe, expect, it, vi } from 'vitest'
import { renderChart } from '../chart/line_chart.js'
import { Recorder } from '../recorder.js'

describe('renderChart', () => {
  it('draws one path per series with points, markers and a legend; skips y ≤ 0 on a log axis', () => {
    const svg = renderChart({
      title: 'T <1>',
      xLabel: 'seconds',
      markers: [{ x: 2, label: 'Redis killed' }],
      panels: [
        {
          title: 'q/s',
          yLabel: 'n',
          series: [
            {
              name: 'a',
              color: '#f00',
              points: [
                [1, 10],
                [2, 20],
                [3, 5],
              ],
            },
            { name: 'b', color: '#00f', points: [] },
          ],
        },
        {
          title: 'p99',
          yLabel: 'ms',
          logY: true,
          series: [
            {
              name: 'c',
              color: '#0f0',
              points: [
                [1, 0],
                [2, 100],
              ],
            },
          ],
        },
      ],
    })
    expect(svg.startsWith('<svg')).toBe(true)
    expect(svg).toContain('T &lt;1&gt;')
    expect(svg.match(/<path /g)?.length).toBe(2)
    expect(svg).toContain('Redis killed')
    expect(svg).not.toMatch(/NaN|Infinity/)
    // the log panel's path has one point only (y = 0 skipped)
    expect(svg).toMatch(/<path d="M[\d.]+,[\d.]+" fill="none" stroke="#0f0"/)
  })
})

describe('Recorder', () => {
  it('sorts answers into status classes and gives percentiles in ms', () => {
    const r = new Recorder(performance.now())
    for (let i = 1; i <= 100; i++) r.response(200, i)
    r.response(429, 1)
    r.response(404, 1)
    r.response(503, 1)
    r.error()
    expect(r.total).toEqual({ ok: 100, limited: 1, clientErrors: 1, serverErrors: 1, errors: 1 })
    expect(r.requests).toBe(104)
    const p = r.percentiles()
    expect(p.p50).toBeGreaterThanOrEqual(49)
    expect(p.p50).toBeLessThanOrEqual(51)
    expect(p.max).toBeCloseTo(100, 0)
    expect(r.timeline()[0]?.errors).toBe(2)
  })

  it('counts requests sent but neither answered nor failed as unanswered', () => {
    const r = new Recorder(performance.now())
    r.response(200, 1)
    r.error()
    expect(r.unanswered).toBe(0)
    r.sent = 5
    expect(r.unanswered).toBe(3)
  })

  it('spans from the send of the first answered request to the last answer, not the nominal duration', () => {
    const now = vi.spyOn(performance, 'now')
    try {
      now.mockReturnValue(1_000)
      const r = new Recorder(1_000)
      expect(r.spanMs).toBe(0)
      now.mockReturnValue(1_030)
      r.response(200, 20) // sent at 1,010
      now.mockReturnValue(2_500)
      r.response(429, 5)
      // a load generator that ran a second past its 2 s
      now.mockReturnValue(4_020)
      r.response(429, 10)
      expect(r.spanMs).toBe(3_010)
    } finally {
      now.mockRestore()
    }
  })
})
