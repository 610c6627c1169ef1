import type { RateLimitFallback, RateLimitMode } from 'floodgate'
import type { Quotas } from './quotas.js'

/** The insurance fallback with a share of 1 / the live instances (`RATE_LIMIT_INSURANCE_PERCENT=0`). */
export const PER_INSTANCE_INSURANCE = 'insurancePerInstance' as const

/** Settings of the rate-limit plugin (`rateLimitFromConfig` fills them from `RATE_LIMIT_*`). */
export interface RateLimitSettings {
  /** Redis key prefix, e.g. `va` (keys: `<prefix>:rl:{<policy>:<client>}:…`). */
  prefix: string
  quotas: Quotas
  /**
   * While Redis is unreachable: floodgate's RateLimitFallback, or {@link PER_INSTANCE_INSURANCE}
   * (an insurance limiter granting 1 / the live instances of each quota, counted by the
   * interaction flush's member set; 1 without the flush).
   */
  fallback: RateLimitFallback | typeof PER_INSTANCE_INSURANCE
  /**
   * floodgate's limiter mode: `exact` (one Redis call per request) or `leased` (slices of each quota
   * reserved in Redis, decided locally; given back on close). No default here: `buildApp` and the
   * config fill it from `RATE_LIMIT_MODE` (default in src/config/fields.ts).
   */
  mode: RateLimitMode
  /** Idle event-loop time (ms) a Redis decision gets before the fallback answers (floodgate `withinDeadline`). */
  timeoutMs: number
  /** Longest wall-clock wait (ms) for a Redis decision, however busy the process. @default floodgate's `DEADLINE_DEFAULTS.maxWaitMs` */
  maxWaitMs?: number
  /** Called for each Redis failure the fallback absorbed. @default a debug log line */
  onStoreError?: (error: Error) => void
}
