export type { BreakerState } from '../circuit_breaker/index.js'
export { Cache, createCache, type Loader } from './cache.js'
export { type Codec, jsonCodec } from './codec.js'
export { CACHE_OUTCOMES, type CacheEvents, type CacheOutcome, type CacheOutcomeEvent } from './events.js'
export type { InvalidationResult } from './invalidation.js'
export type { CacheNamespace, ClearResult } from './namespace/cache_namespace.js'
export { isNotFound, NOT_FOUND, type NotFound, notFound } from './not_found.js'
export {
  type BloomGate,
  type BreakerOptions,
  CACHE_DEFAULTS,
  type CacheOptions,
  type CallOptions,
  type L1Options,
  type TtlMs,
} from './options.js'
export type { BatchLoader } from './read_many.js'
export { Singleflight } from './singleflight.js'
