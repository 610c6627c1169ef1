/** The algorithms a Redis limiter runs; see each Lua file's header for the exact rule and its source. */
export type RateLimitAlgorithm = 'fixedWindow' | 'slidingLog' | 'slidingWindow' | 'tokenBucket' | 'gcra'

/** Every algorithm a Redis limiter runs. */
export const RATE_LIMIT_ALGORITHMS: readonly RateLimitAlgorithm[] = [
  'fixedWindow',
  'slidingLog',
  'slidingWindow',
  'tokenBucket',
  'gcra',
]

/** The algorithms the in-memory limiter runs (bounded LRU state). */
export type MemoryRateLimitAlgorithm = 'slidingWindow' | 'tokenBucket'

/** What a limiter enforces; carried on every result so HTTP headers can describe it. */
export interface RateLimitPolicy {
  /** Policy name, e.g. `"api"` (the quoted name of the IETF `RateLimit-Policy` field). */
  readonly name: string
  readonly algorithm: RateLimitAlgorithm
  /** Units admitted per window (for token bucket and GCRA: units refilled per window, the sustained rate). */
  readonly limit: number
  /** Window length (ms). */
  readonly windowMs: number
  /** Units admitted at once from idle (token bucket and GCRA); equals `limit` for the window algorithms. */
  readonly burst: number
}

/**
 * Who decided:
 * - `redis`: the Redis script (the shared, exact answer);
 * - `memory`: an in-memory limiter ({@link createMemoryRateLimiter});
 * - `lease`: a slice of the key's quota this instance reserved in Redis earlier (leased mode, no Redis call);
 * - `blockedCache`: a block remembered in-process until its retry time (no Redis call);
 * - `failOpen` / `failClosed` / `insurance`: Redis was unavailable and the fallback policy answered.
 */
export type RateLimitSource =
  | 'redis'
  | 'lease'
  | 'memory'
  | 'blockedCache'
  | 'failOpen'
  | 'failClosed'
  | 'insurance'

/**
 * The answer to one `limit()` call. A limited request is a value (`allowed: false`), never an exception.
 * All times are ms; absolute times are ms since the Unix epoch on the deciding clock
 * (Redis `TIME` when `source` is `redis`, the local clock otherwise).
 */
export interface RateLimitResult {
  /** `true`: admitted, `cost` consumed. `false`: rejected, nothing consumed. */
  readonly allowed: boolean
  /** Units per window of the policy that decided (the insurance share when `source` is `insurance`). */
  readonly limit: number
  /**
   * Whole units still admissible now, after this decision (≥ 0). Leased mode: what nobody else can
   * take (this instance's slice left, plus the unheld quota on the answer that took the slice), a
   * lower bound of the cluster-wide figure.
   */
  readonly remaining: number
  /** When the quota is fully restored if no more requests come (ms epoch): window end, newest log entry + window, full bucket. */
  readonly resetAtMs: number
  /** 0 when admitted; when rejected, ms until a request of the same cost can be admitted; -1 when the cost can never fit (cost > limit or burst). */
  readonly retryAfterMs: number
  /** The deciding clock's time at the decision (ms epoch); subtract it from `resetAtMs` for a duration free of clock skew. */
  readonly nowMs: number
  readonly policy: RateLimitPolicy
  readonly source: RateLimitSource
}

/** Per-call options of `limit()`. */
export interface LimitOptions {
  /**
   * Units this request takes (weighted requests), an integer ≥ 1.
   * @default 1
   */
  cost?: number
}

/** Anything that decides: Redis-backed or in-memory. */
export interface RateLimiter {
  readonly policy: RateLimitPolicy
  /**
   * Decides for `key` (a user id, an IP…).
   * @throws {InvalidArgumentError} `key` empty, or `cost` not an integer ≥ 1.
   */
  limit(key: string, options?: LimitOptions): Promise<RateLimitResult>
  /**
   * The same decision as `limit()`, synchronously, when this process can make it without the
   * store: a leased slice, a remembered block, an in-memory limiter. It consumes exactly what
   * `limit()` would and reports the decision the same way (events, metrics). `undefined` when
   * the store must be asked (nothing consumed): call `limit()` then, which stays the full API
   * (store, fallback, start-up wait). Times in the result are ms, as for `limit()`.
   * @throws {InvalidArgumentError} `key` empty, or `cost` not an integer ≥ 1 (synchronously).
   */
  limitLocal(key: string, options?: LimitOptions): RateLimitResult | undefined
}

/** What `peek()` reads: the quota left for a key, nothing consumed. Times in ms (Redis clock). */
export interface RateLimitPeek {
  /** Units per window of the policy. */
  readonly limit: number
  /** Whole units a request could take now (≥ 0). */
  readonly remaining: number
  /** When the quota is fully restored if no more requests come (ms epoch). */
  readonly resetAtMs: number
  /** Redis `TIME` at the read (ms epoch). */
  readonly nowMs: number
  readonly policy: RateLimitPolicy
}
