import type {
  Counter,
  CounterConfiguration,
  Gauge,
  GaugeConfiguration,
  Histogram,
  HistogramConfiguration,
} from 'prom-client'
import { promRegistry } from './prom_client.js'
import type { MetricsRegistry } from './registry.js'

/**
 * The metric `config.name` of `registry`, made with `new Kind(config)` and registered there on first
 * use: several bindings (caches, guards) share one registry, each metric created once.
 */
export function sharedMetric<T extends string>(
  registry: MetricsRegistry,
  Kind: typeof Counter,
  config: CounterConfiguration<T>,
): Counter<T>
export function sharedMetric<T extends string>(
  registry: MetricsRegistry,
  Kind: typeof Gauge,
  config: GaugeConfiguration<T>,
): Gauge<T>
export function sharedMetric<T extends string>(
  registry: MetricsRegistry,
  Kind: typeof Histogram,
  config: HistogramConfiguration<T>,
): Histogram<T>
export function sharedMetric(
  registry: MetricsRegistry,
  Kind: typeof Counter | typeof Gauge | typeof Histogram,
  config: { name: string; help: string },
): unknown {
  const Metric = Kind as new (config: { name: string; help: string; registers: unknown[] }) => unknown
  return (
    registry.getSingleMetric(config.name) ?? new Metric({ ...config, registers: [promRegistry(registry)] })
  )
}
