import type {
  Counter,
  CounterConfiguration,
  Gauge,
  GaugeConfiguration,
  Histogram,
  HistogramConfiguration,
  Registry,
} from 'prom-client'

/**
 * The metric `config.name` of `registry`, made with `new Kind(config)` and registered there on first
 * use: several bindings (caches, guards) share one registry, each metric created once.
 */
export function sharedMetric<T extends string>(
  registry: Registry,
  Kind: typeof Counter,
  config: CounterConfiguration<T>,
): Counter<T>
export function sharedMetric<T extends string>(
  registry: Registry,
  Kind: typeof Gauge,
  config: GaugeConfiguration<T>,
): Gauge<T>
export function sharedMetric<T extends string>(
  registry: Registry,
  Kind: typeof Histogram,
  config: HistogramConfiguration<T>,
): Histogram<T>
export function sharedMetric(
  registry: Registry,
  Kind: typeof Counter | typeof Gauge | typeof Histogram,
  config: { name: string; help: string },
): unknown {
  const Metric = Kind as new (config: { name: string; help: string; registers: Registry[] }) => unknown
  return registry.getSingleMetric(config.name) ?? new Metric({ ...config, registers: [registry] })
}
