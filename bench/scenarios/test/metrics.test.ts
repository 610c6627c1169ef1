import { describe, expect, it } from 'vitest'
import { bucketDelta, counterDelta, parseMetrics } from '../metrics.js'
import { processStartTime } from '../processes.js'

const instance = (db: number, cpu: number, lag: number, le: Record<string, number>) =>
  [
    '# HELP db_queries_total statements',
    `db_queries_total ${db}`,
    `process_cpu_seconds_total ${cpu}`,
    `nodejs_eventloop_lag_max_seconds ${lag}`,
    ...Object.entries(le).map(
      ([bound, n]) =>
        `http_request_duration_seconds_bucket{le="${bound}",method="GET",route="/videos/:id",status="200"} ${n}`,
    ),
    'http_request_duration_seconds_bucket{le="0.1",method="PUT",route="/videos/:id/like",status="200"} 999',
    'floodgate_interactions_flush_oldest_pending_age_seconds{stream="s"} 1.5',
    'floodgate_cache_events_total{cache="videos",outcome="load"} 3',
    'floodgate_counters_stale_reads_total{reason="timeout"} 2',
  ].join('\n')

describe('parseMetrics', () => {
  it('sums counters over instances, takes the largest lag, and keeps GET /videos/:id buckets only', () => {
    const s = parseMetrics([
      instance(10, 1.5, 0.02, { '0.01': 5, '0.1': 9, '+Inf': 10 }),
      instance(5, 0.5, 0.07, { '0.01': 1, '0.1': 2, '+Inf': 2 }),
      '',
    ])
    expect(s.dbQueries).toBe(15)
    expect(s.cpuS).toBe(2)
    expect(s.eventLoopMaxS).toBe(0.07)
    expect(s.flushLagS).toBe(1.5)
    expect(s.floodgateCounters).toEqual({
      'floodgate_cache_events_total{cache="videos",outcome="load"}': 6,
      'floodgate_counters_stale_reads_total{reason="timeout"}': 4,
    })
    expect([...s.videoReadBuckets]).toEqual([
      [0.01, 6],
      [0.1, 11],
      [Infinity, 12],
    ])
  })
})

describe('bucketDelta', () => {
  it('gives the answers between two scrapes, the share slower than each bound and the p99 bound', () => {
    const before = new Map([
      [0.01, 100],
      [0.1, 100],
      [Infinity, 100],
    ])
    const after = new Map([
      [0.01, 190],
      [0.1, 199],
      [Infinity, 200],
    ])
    const d = bucketDelta(before, after)
    expect(d.count).toBe(100)
    expect(d.slowerThan).toEqual({ '0.01': 0.1, '0.1': 0.01 })
    expect(d.p99UpperS).toBe(0.1)
    expect(bucketDelta(before, before).count).toBe(0)
  })
})

describe('counterDelta', () => {
  it('keeps the counters that grew, by how much; a new counter counts from 0', () => {
    expect(counterDelta({ a: 1, b: 5 }, { a: 4, b: 5, c: 2 })).toEqual({ a: 3, c: 2 })
  })
})

describe('processStartTime', () => {
  it('reads this process’s start time and is undefined for a pid that does not exist', () => {
    const t = processStartTime(process.pid)
    expect(t).toMatch(/^\d+$/)
    expect(processStartTime(process.pid)).toBe(t)
    expect(processStartTime(2 ** 22 + 1)).toBeUndefined()
  })
})
