/**
 * Defaults of the rate limiters, in one place.
 *
 * - `maxKeys` 10,000: keys each in-process LRU of a limiter holds (the memory limiter, the
 *   insurance fallback, the blocked-key cache, the leases); the least recently used beyond it is
 *   dropped (a dropped key starts with its full quota, a dropped lease gives its units back).
 * - `leaseFraction` 1/4: each lease takes a quarter of the quota nobody holds (at least the
 *   request's cost). Leases to spend a quota of L from one instance: at most about
 *   ln(L/4)/ln(4/3) + 4 (14 for L = 100, so 0.14 Redis calls per admitted unit, fewer under the
 *   quota); what other instances can hold unused at once is at most a quarter of the free quota
 *   each, and shrinks with it.
 * - `maxWaitMs` 10 s: longest total wait of {@link waitUntilAllowed}.
 */
export const RATE_LIMIT_DEFAULTS = { maxKeys: 10_000, leaseFraction: 0.25, maxWaitMs: 10_000 } as const
