import type {
  BucketRankings,
  CountsRecovery,
  CountsUnavailableReason,
  LiveCounts,
  LiveCountsStats,
} from 'floodgate'
import { Counter, Gauge, type Registry } from 'prom-client'

/** The parts of the counters service the scrape reads (library types: no import of the service). */
export interface CountersView {
  recovery: Pick<CountsRecovery, 'serving'>
  rankings: Pick<BucketRankings, 'stats'>
  live: Pick<LiveCounts, 'stats' | 'size' | 'bytes' | 'tracking'>
}

/** Counters-side Prometheus metrics, updated by the overlay and the recovery events. */
export interface CountersMetrics {
  /** One page whose Redis counts read failed (served the last Redis counts or the DB columns), by reason. */
  staleRead(reason: CountsUnavailableReason): void
  /** A rebuild ended, `rebuilt` or `aborted`. */
  rebuild(outcome: 'rebuilt' | 'aborted'): void
}

/**
 * `floodgate_counters_serving` (1 while Redis counts are served, 0 while the DB columns are),
 * `floodgate_counters_stale_reads_total{reason}`, `floodgate_counters_rebuilds_total{outcome}`,
 * `floodgate_rankings_window_recomputes_total` (merged trending results this instance recomputed),
 * `floodgate_rankings_corrupt_scores_total` (members left out of rankings: a non-finite stored score),
 * `floodgate_counts_layer_events_total{event}`, `floodgate_counts_layer_entries`, `floodgate_counts_layer_bytes`
 * (the in-process live-counts layer), `floodgate_counts_tracking_established` (its client tracking).
 */
export function registerCountersMetrics(registry: Registry, counters: () => CountersView): CountersMetrics {
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
  const layerEvents: Record<string, keyof LiveCountsStats> = {
    local_hit: 'localHits',
    redis_read: 'redisBatches',
    redis_read_id: 'redisIds',
    redis_read_failure: 'redisFailures',
    fallback_load: 'fallbackLoads',
    fallback_id: 'fallbackIds',
    stale_serve: 'staleServes',
    tracked_hit: 'trackedHits',
    invalidation: 'invalidations',
    tracking_flush: 'trackingFlushes',
  }
  new Counter({
    name: 'floodgate_counts_layer_events_total',
    help: 'What the in-process live-counts layer did, by event: ids answered in process (local_hit; tracked_hit: of those, answered because Redis tracks them), batched Redis reads and their ids, failed Redis reads, fallback (PostgreSQL) calls and their ids, ids served stale, ids Redis invalidated (invalidation), drops of everything tracked (tracking_flush)',
    labelNames: ['event'] as const,
    registers: [registry],
    collect() {
      const stats = counters().live.stats
      this.reset()
      for (const [event, field] of Object.entries(layerEvents)) this.inc({ event }, stats[field])
    },
  })
  new Gauge({
    name: 'floodgate_counts_tracking_established',
    help: '1 while Redis client-side caching (CLIENT TRACKING) of live counts is established, 0 while not (counts then bounded by COUNTS_MAX_AGE_MS)',
    registers: [registry],
    collect() {
      this.set(counters().live.tracking?.established ? 1 : 0)
    },
  })
  new Gauge({
    name: 'floodgate_counts_layer_entries',
    help: 'Videos the in-process live-counts layer holds (bounded by COUNTS_LOCAL_MAX_ENTRIES)',
    registers: [registry],
    collect() {
      this.set(counters().live.size)
    },
  })
  new Gauge({
    name: 'floodgate_counts_layer_bytes',
    help: 'Estimated bytes of those entries (bounded by COUNTS_LOCAL_MAX_BYTES)',
    registers: [registry],
    collect() {
      this.set(counters().live.bytes)
    },
  })
  const stale = new Counter({
    name: 'floodgate_counters_stale_reads_total',
    help: 'Pages whose Redis counts read failed (served the last Redis counts or the PostgreSQL columns, marked stale), by reason',
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
