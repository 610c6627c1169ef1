/**
 * A metrics registry as floodgate's options and `bind*Metrics` helpers take it: the part of a
 * prom-client `Registry` they use (pass your `Registry`, or prom-client's `register`). Declared
 * here so floodgate's public types never name prom-client, an optional peer dependency: an app
 * without it type-checks.
 */
export interface MetricsRegistry {
  /** The metric registered under `name`, if any (prom-client: `Registry.getSingleMetric`). */
  getSingleMetric(name: string): unknown
  /** Registers a metric (prom-client: `Registry.registerMetric`, called by its metric constructors). */
  registerMetric(metric: never): void
}
