/**
 * Defaults of {@link CircuitBreaker}, in one place.
 *
 * - `failureThreshold` 5: consecutive failures before the breaker opens; scattered errors of a
 *   healthy dependency do not open it.
 * - `coolDownMs` 5,000 ms: how long an open breaker refuses calls before one probe, unless its
 *   owner calls `probeNow()` sooner (the cache does when its Redis connection is ready again);
 *   the cool-down is what is left for a dependency that is up but failing (timeouts).
 */
export const BREAKER_DEFAULTS = { failureThreshold: 5, coolDownMs: 5_000 } as const
