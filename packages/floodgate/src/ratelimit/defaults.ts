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
 * - `leasePrefetch` false: a key's next lease call leaves when a decision finds its slice spent,
 *   not when a decision spends it, so no quota is taken before it is asked for.
 * - `maxWaitMs` 10 s: longest total wait of {@link waitUntilAllowed}.
 * - `batchMaxKeys` 256: most limiter keys one script call decides (the decisions, or the lease
 *   calls, of one event-loop poll phase; `script_batch.ts`). A batch runs atomically in Redis: 256
 *   window decisions are ~1,000 commands inside one script, a few hundred µs of Redis time, the
 *   same work 256 calls would do minus their dispatch; the cache's read batch has the same bound.
 */
export const RATE_LIMIT_DEFAULTS = {
  maxKeys: 10_000,
  leaseFraction: 0.25,
  leasePrefetch: false,
  maxWaitMs: 10_000,
  batchMaxKeys: 256,
} as const
