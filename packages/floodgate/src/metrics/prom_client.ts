import { createRequire } from 'node:module'
import type * as PromClient from 'prom-client'
import { FloodgateError } from '../errors/index.js'
import type { MetricsRegistry } from './registry.js'

let loaded: typeof PromClient | undefined

/**
 * prom-client, loaded on the first metrics binding rather than at import: it is an optional peer
 * dependency, so an app without it can use every primitive, just not the `bind*Metrics` helpers.
 * @throws {FloodgateError} `FLOODGATE_MISSING_PEER` when prom-client is not installed.
 */
export function promClient(): typeof PromClient {
  if (loaded) return loaded
  try {
    loaded = createRequire(import.meta.url)('prom-client') as typeof PromClient
    return loaded
  } catch (error) {
    throw new FloodgateError('FLOODGATE_MISSING_PEER', 'metrics need prom-client: npm install prom-client', {
      cause: error,
    })
  }
}

/** The prom-client `Registry` behind a {@link MetricsRegistry} (only prom-client registries reach the binders). */
export function promRegistry(registry: MetricsRegistry): PromClient.Registry {
  return registry as unknown as PromClient.Registry
}
