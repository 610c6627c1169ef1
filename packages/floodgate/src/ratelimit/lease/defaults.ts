/**
 * Defaults of the leased mode, in one place.
 *
 * - `fraction` 1/4: each lease takes a quarter of the quota nobody holds (at least the request's
 *   cost). Leases to spend a quota of L from one instance: at most about ln(L/4)/ln(4/3) + 4 (14 for
 *   L = 100, so 0.14 Redis calls per admitted unit, fewer under the quota); what other instances
 *   can hold unused at once is at most a quarter of the free quota each, and shrinks with it.
 * - `maxKeys` 10,000: leases held in-process (LRU); an evicted lease gives its units back.
 */
export const LEASE_DEFAULTS = { fraction: 0.25, maxKeys: 10_000 } as const
