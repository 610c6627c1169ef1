import type { CountsUnavailableReason } from 'floodgate'
import { Counter, Gauge, type Registry } from 'prom-client'
import type { CountersService } from './service.js'

/** Counters-side Prometheus metrics, updated by the overlay and the recovery events. */
export interface CountersMetrics {
  /** One page of counts served from the DB columns instead of Redis, by reason. */
  staleRead(reason: CountsUnavailableReason): void
  /** A rebuild ended, `rebuilt` or `aborted`. */
  rebuild(outcome: 'rebuilt' | 'aborted'): void
}

/**
 * `floodgate_counters_serving` (1 while Redis counts are served, 0 while the DB columns are),
 * `floodgate_counters_stale_reads_total{reason}`, `floodgate_counters_rebuilds_total{outcome}`,
 * `floodgate_rankings_window_recomputes_total` (merged trending results this instance recomputed),
 * `floodgate_rankings_corrupt_scores_total` (members left out of rankings: a non-finite stored score).
 */
export function registerCountersMetrics(
  registry: Registry,
  counters: () => CountersService,
): CountersMetrics {
  new Gauge({
    name: 'floodgate_counters_serving',
    help: '1 while counts are served from Redis, 0 while from the PostgreSQL columns (Redis lost its data or is rebuilding)',
    registers: [registry],
    collect() {
      this.set(counters().recovery.serving() ? 1 : 0)
    },
  })
  new Counter({
    name: 'floodgate_rankings_window_recomputes_total',
    help: 'Merged trending results (ZUNIONSTORE … WEIGHTS) this instance recomputed',
    registers: [registry],
    collect() {
      setCounter(this, counters().rankings.stats.recomputes)
    },
  })
  new Counter({
    name: 'floodgate_rankings_corrupt_scores_total',
    help: 'Ranking members left out of answers because their stored score was not a finite number (a foreign write)',
    registers: [registry],
    collect() {
      setCounter(this, counters().rankings.stats.corruptScores)
    },
  })
  const stale = new Counter({
    name: 'floodgate_counters_stale_reads_total',
    help: 'Pages of counts served from the PostgreSQL columns instead of Redis, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
  })
  const rebuilds = new Counter({
    name: 'floodgate_counters_rebuilds_total',
    help: 'Rebuilds of Redis counters from PostgreSQL by this instance, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  return {
    staleRead: (reason) => stale.inc({ reason }),
    rebuild: (outcome) => rebuilds.inc({ outcome }),
  }
}

/** Counters read from a running total at scrape time (typed counter: the total only grows). */
function setCounter(counter: Counter, total: number): void {
  counter.reset()
  counter.inc(total)
}
