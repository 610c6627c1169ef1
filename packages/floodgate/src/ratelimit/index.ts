export { RATE_LIMIT_DEFAULTS } from './defaults.js'
export { RateLimiterEventEmitter, type RateLimiterEvents } from './events.js'
export type { RateLimitFallback } from './fallback.js'
export {
  putRateLimitHeaders,
  type RateLimitHeaderName,
  type RateLimitHeaderOptions,
  rateLimitHeaders,
} from './headers.js'
export { type LimitAllResult, limitAll, type PolicyCheck } from './limit_all.js'
export {
  createMemoryRateLimiter,
  type MemoryRateLimiter,
  type MemoryRateLimiterOptions,
} from './memory/memory_rate_limiter.js'
export type { PolicyOptions } from './policy.js'
export {
  createRateLimiter,
  FALLBACK_LOG_INTERVAL_MS,
  type LeaseOptions,
  type RateLimiterOptions,
  type RateLimitMode,
  type RedisRateLimiter,
} from './redis_rate_limiter.js'
export { RATE_LIMIT_AREA, rateLimitKeys } from './redis_scripts.js'
export {
  type LimitOptions,
  type MemoryRateLimitAlgorithm,
  RATE_LIMIT_ALGORITHMS,
  type RateLimitAlgorithm,
  type RateLimiter,
  type RateLimitPeek,
  type RateLimitPolicy,
  type RateLimitResult,
  type RateLimitSource,
} from './types.js'
export { RateLimitWaitError, type WaitUntilAllowedOptions, waitUntilAllowed } from './wait_until_allowed.js'
