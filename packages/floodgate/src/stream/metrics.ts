import type { Counter, Gauge, Histogram } from 'prom-client'
import { promClient, promRegistry } from '../metrics/prom_client.js'
import type { MetricsRegistry } from '../metrics/registry.js'
import type { LagSnapshot } from './types.js'

/** Prometheus metrics of one consumer group (label `group`), registered once per registry and name prefix. */
export class ConsumerMetrics {
  private readonly length: Gauge<'group'>
  private readonly pending: Gauge<'group'>
  private readonly undelivered: Gauge<'group'>
  private readonly oldestPending: Gauge<'group'>
  private readonly oldestUndelivered: Gauge<'group'>
  private readonly applied: Counter<'group'>
  private readonly deadLettered: Counter<'group'>
  private readonly claimed: Counter<'group'>
  private readonly batch: Histogram<'group'>

  constructor(
    registry: MetricsRegistry,
    prefix: string,
    private readonly group: string,
  ) {
    const { Counter, Gauge, Histogram } = promClient()
    const labelNames = ['group'] as const
    const get = <T>(name: string, make: () => T): T =>
      (registry.getSingleMetric(`${prefix}${name}`) as T | undefined) ?? make()
    const registers = [promRegistry(registry)]
    this.length = get(
      'length',
      () =>
        new Gauge({ name: `${prefix}length`, help: 'Entries held in the streams', labelNames, registers }),
    )
    this.pending = get(
      'pending',
      () =>
        new Gauge({
          name: `${prefix}pending`,
          help: 'Entries delivered to a consumer and not yet acknowledged',
          labelNames,
          registers,
        }),
    )
    this.undelivered = get(
      'undelivered',
      () =>
        new Gauge({
          name: `${prefix}undelivered`,
          help: 'Entries not yet delivered to any consumer of the group',
          labelNames,
          registers,
        }),
    )
    this.oldestPending = get(
      'oldest_pending_age_seconds',
      () =>
        new Gauge({
          name: `${prefix}oldest_pending_age_seconds`,
          help: 'Age of the oldest pending entry (s), 0 when none',
          labelNames,
          registers,
        }),
    )
    this.oldestUndelivered = get(
      'oldest_undelivered_age_seconds',
      () =>
        new Gauge({
          name: `${prefix}oldest_undelivered_age_seconds`,
          help: 'Age of the oldest entry not yet delivered to the group (s), 0 when none',
          labelNames,
          registers,
        }),
    )
    this.applied = get(
      'applied_total',
      () =>
        new Counter({
          name: `${prefix}applied_total`,
          help: 'Entries applied and acknowledged (rate() gives events/s)',
          labelNames,
          registers,
        }),
    )
    this.deadLettered = get(
      'dead_lettered_total',
      () =>
        new Counter({
          name: `${prefix}dead_lettered_total`,
          help: 'Entries moved to the dead-letter stream',
          labelNames,
          registers,
        }),
    )
    this.claimed = get(
      'claimed_total',
      () =>
        new Counter({
          name: `${prefix}claimed_total`,
          help: 'Entries claimed from idle consumers (XAUTOCLAIM)',
          labelNames,
          registers,
        }),
    )
    this.batch = get(
      'batch_apply_seconds',
      () =>
        new Histogram({
          name: `${prefix}batch_apply_seconds`,
          help: 'Duration of one successful batch apply (s)',
          labelNames,
          buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
          registers,
        }),
    )
  }

  lag(snapshot: LagSnapshot): void {
    const labels = { group: this.group }
    this.length.set(labels, snapshot.length)
    this.pending.set(labels, snapshot.pending)
    this.undelivered.set(labels, snapshot.undelivered)
    this.oldestPending.set(labels, snapshot.oldestPendingAgeMs / 1000)
    this.oldestUndelivered.set(labels, snapshot.oldestUndeliveredAgeMs / 1000)
  }

  appliedBatch(count: number, seconds: number): void {
    this.applied.inc({ group: this.group }, count)
    this.batch.observe({ group: this.group }, seconds)
  }

  deadLetter(): void {
    this.deadLettered.inc({ group: this.group })
  }

  claim(count: number): void {
    this.claimed.inc({ group: this.group }, count)
  }
}
