import { ACQUIRE_OUTCOMES, LEASE_END_REASONS, type MutexEventEmitter } from '../lock/events.js'
import { promClient } from './prom_client.js'
import type { MetricsRegistry } from './registry.js'
import { sharedMetric } from './shared_metric.js'

/**
 * Registers the mutex metrics in `registry` and feeds them from `events` (a `Mutex`'s `events`, or
 * one emitter shared by many mutexes through their `events` option), labelled `mutex` = `name`
 * (a low-cardinality name for the kind of lock, never a per-entity lock key):
 * - `floodgate_mutex_acquisitions_total{mutex,outcome}` counter: `acquire()` calls by outcome
 *   (`acquired`, `timeout`, `aborted`, `error`);
 * - `floodgate_mutex_acquire_wait_seconds{mutex}` histogram of the time in `acquire()` (s), every outcome;
 * - `floodgate_mutex_leases_ended_total{mutex,reason}` counter: leases ended (`released`, and the
 *   ones that lost their lock while held: `lost`, `expired`).
 * Every series exists at 0 from the start. Several names may share one registry.
 */
export function bindMutexMetrics(registry: MetricsRegistry, name: string, events: MutexEventEmitter): void {
  const { Counter, Histogram } = promClient()
  const acquisitions = sharedMetric(registry, Counter, {
    name: 'floodgate_mutex_acquisitions_total',
    help: 'Mutex acquire() calls by outcome (acquired, timeout, aborted, error)',
    labelNames: ['mutex', 'outcome'],
  })
  const wait = sharedMetric(registry, Histogram, {
    name: 'floodgate_mutex_acquire_wait_seconds',
    help: 'Time spent in mutex acquire(), every outcome (s)',
    labelNames: ['mutex'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  })
  const ended = sharedMetric(registry, Counter, {
    name: 'floodgate_mutex_leases_ended_total',
    help: 'Mutex leases ended: released by the holder, or lost/expired while held',
    labelNames: ['mutex', 'reason'],
  })
  for (const outcome of ACQUIRE_OUTCOMES) acquisitions.labels(name, outcome).inc(0)
  for (const reason of LEASE_END_REASONS) ended.labels(name, reason).inc(0)
  wait.zero({ mutex: name })
  const waitChild = wait.labels(name)
  events.on('acquire', ({ outcome, waitedMs }) => {
    acquisitions.labels(name, outcome).inc()
    waitChild.observe(waitedMs / 1000)
  })
  events.on('lease_ended', ({ reason }) => ended.labels(name, reason).inc())
}
