import type { ConcurrencyGuard } from '../guard/index.js'
import { SHED_REASONS } from '../guard/index.js'
import { promClient } from './prom_client.js'
import type { MetricsRegistry } from './registry.js'
import { sharedMetric } from './shared_metric.js'

// Gauges read the guards at scrape time: one list per registry, keyed by the `guard` label.
const guardsByRegistry = new WeakMap<MetricsRegistry, Map<string, ConcurrencyGuard>>()

/**
 * Registers the guard metrics in `registry` and feeds them from `guard`
 * (labelled `guard` = the guard's `name`; every series exists from the start):
 * - `floodgate_guard_in_flight{guard}` gauge: calls running;
 * - `floodgate_guard_queued{guard}` gauge: calls waiting for a slot;
 * - `floodgate_guard_shed_total{guard,reason}` counter: calls refused (`queue_full`, `queue_timeout`);
 * - `floodgate_guard_queue_wait_seconds{guard}` histogram of the queue wait (s) of admitted calls.
 * Several guards may share one registry under different names (the metrics are created once).
 */
export function bindGuardMetrics(registry: MetricsRegistry, guard: ConcurrencyGuard): void {
  const { Counter, Gauge, Histogram } = promClient()
  const name = guard.options.name
  let guards = guardsByRegistry.get(registry)
  if (!guards) {
    guards = new Map()
    guardsByRegistry.set(registry, guards)
  }
  guards.set(name, guard)
  const all = guards
  const gauge = (metric: string, help: string, read: (g: ConcurrencyGuard) => number) =>
    sharedMetric(registry, Gauge, {
      name: metric,
      help,
      labelNames: ['guard'],
      collect() {
        for (const [label, g] of all) this.labels(label).set(read(g))
      },
    })
  gauge('floodgate_guard_in_flight', 'Calls running inside the concurrency guard', (g) => g.inFlight)
  gauge('floodgate_guard_queued', 'Calls waiting for a slot of the concurrency guard', (g) => g.queued)
  const shed = sharedMetric(registry, Counter, {
    name: 'floodgate_guard_shed_total',
    help: 'Calls the concurrency guard refused without running them, by reason',
    labelNames: ['guard', 'reason'],
  })
  const wait = sharedMetric(registry, Histogram, {
    name: 'floodgate_guard_queue_wait_seconds',
    help: 'Time admitted calls waited for a slot of the concurrency guard (s)',
    labelNames: ['guard'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  })
  for (const reason of SHED_REASONS) shed.labels(name, reason).inc(0)
  wait.zero({ guard: name })
  const waitChild = wait.labels(name)
  guard.events.on('shed', ({ reason }) => shed.labels(name, reason).inc())
  guard.events.on('admitted', ({ waitedMs }) => waitChild.observe(waitedMs / 1000))
}
