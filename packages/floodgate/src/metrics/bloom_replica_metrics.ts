import type { Counter, Gauge } from 'prom-client'
import type { BloomReplica, BloomReplicaState } from '../bloom/index.js'
import { promClient, promRegistry } from './prom_client.js'
import type { MetricsRegistry } from './registry.js'

const STATE_VALUE: Record<BloomReplicaState, number> = { 'not-loaded': 0, live: 1, reloading: 2, closed: 3 }

/** Replicas per registry, by filter label: the collect callbacks read them at scrape time. */
const bound = new WeakMap<MetricsRegistry, Map<string, BloomReplica>>()

/**
 * Registers Bloom replica metrics in `registry`, read from `replica` at each scrape (label
 * `filter`); several replicas may share one registry:
 * - `floodgate_bloom_replica_state` gauge: 0 not loaded, 1 live, 2 reloading, 3 closed;
 * - `floodgate_bloom_replica_lag` gauge: announced adds (as of the last sync) not applied yet;
 * - `floodgate_bloom_replica_syncs_total` counter: sync reads (HMGET) sent — `rate()` = syncs/s;
 * - `floodgate_bloom_replica_reloads_total` counter: loads started, any reason;
 * - `floodgate_bloom_replica_items_total{answer}` counter: `local_absent` (answered from the
 *   bits after a sync), `remote` (asked the filter in Redis), `sync_failed` (answered "maybe"),
 *   `unloaded` (no bits, another query was asking Redis: answered "maybe" at once).
 */
export function bindBloomReplicaMetrics(
  registry: MetricsRegistry,
  filter: string,
  replica: BloomReplica,
): void {
  let replicas = bound.get(registry)
  if (replicas === undefined) {
    const { Counter, Gauge } = promClient()
    replicas = new Map()
    bound.set(registry, replicas)
    const all = replicas
    const registers = [promRegistry(registry)]
    const each = (read: (r: BloomReplica) => number) =>
      function (this: Gauge | Counter) {
        this.reset()
        for (const [label, r] of all) this.inc({ filter: label }, read(r))
      }
    new Gauge({
      name: 'floodgate_bloom_replica_state',
      help: 'Bloom replica state: 0 not loaded, 1 live, 2 reloading, 3 closed',
      labelNames: ['filter'],
      registers,
      collect: each((r) => STATE_VALUE[r.state]),
    })
    new Gauge({
      name: 'floodgate_bloom_replica_lag',
      help: 'Announced Bloom adds (as of the last sync) the replica has not applied yet',
      labelNames: ['filter'],
      registers,
      collect: each((r) => r.lag),
    })
    new Counter({
      name: 'floodgate_bloom_replica_syncs_total',
      help: 'Bloom replica sync reads (one HMGET shared by the queries that came before it)',
      labelNames: ['filter'],
      registers,
      collect: each((r) => r.syncs),
    })
    new Counter({
      name: 'floodgate_bloom_replica_reloads_total',
      help: 'Bloom replica loads started (start, gap, generation, reconnect, overflow, retry)',
      labelNames: ['filter'],
      registers,
      collect: each((r) => r.stats.reloads),
    })
    new Counter({
      name: 'floodgate_bloom_replica_items_total',
      help: 'Items the Bloom replica answered "absent" from its bits after a sync, sent to the filter in Redis, answered "maybe" on a failed sync, or answered "maybe" without bits while another query asked Redis',
      labelNames: ['filter', 'answer'],
      registers,
      collect() {
        this.reset()
        for (const [label, r] of all) {
          this.inc({ filter: label, answer: 'local_absent' }, r.stats.localAbsent)
          this.inc({ filter: label, answer: 'remote' }, r.stats.remote)
          this.inc({ filter: label, answer: 'sync_failed' }, r.stats.syncFailures)
          this.inc({ filter: label, answer: 'unloaded' }, r.stats.unloaded)
        }
      },
    })
  }
  replicas.set(filter, replica)
}
