import { defaultConfig } from '../config/load.js'
import type { Config } from '../config/types.js'
import type { VideoCacheSettings } from './settings.js'

/** The cache settings from the validated config (`CACHE_*`, `FEED_CACHE_TTL_MS`, `BLOOM_*`), or `false` when disabled (`CACHE_ENABLED=false` or `CACHE_MODE` other than `floodgate`). */
export function cacheFromConfig(config: Config): VideoCacheSettings | false {
  if (!config.cacheEnabled || config.cacheMode !== 'floodgate') return false
  return videoCacheSettings(config)
}

/** Every cache setting from a config (enabled or not). */
function videoCacheSettings(config: Config): Required<VideoCacheSettings> {
  return {
    ttlMs: { minMs: config.cacheTtlMinMs, maxMs: config.cacheTtlMaxMs },
    negativeTtlMs: config.cacheNegativeTtlMs,
    staleWhileRevalidateMs: config.cacheStaleWhileRevalidateMs,
    lockTtlMs: config.cacheLockTtlMs,
    lockWaitMs: config.cacheLockWaitMs,
    redisTimeoutMs: config.redisCommandTimeoutMs,
    redisMaxWaitMs: config.redisMaxWaitMs,
    l1TtlMs: config.cacheL1TtlMs,
    l1Tracking: config.cacheL1Tracking,
    l1MaxEntries: config.cacheL1MaxEntries,
    l1MaxBytes: config.cacheL1MaxBytes,
    feedTtlMs: config.feedCacheTtlMs,
    bloomBits: config.bloomBits,
    bloomHashes: config.bloomHashes,
    rebuildBloomAtStart: true,
    bloomRebuildRetryBaseMs: config.bloomRebuildRetryBaseMs,
    bloomRebuildRetryMaxMs: config.bloomRebuildRetryMaxMs,
    bloomRebuildTimeoutMs: 5_000,
  }
}

/** The settings an unset option gets: the field table's defaults (src/config/fields.ts). */
export const defaultVideoCacheSettings: Required<VideoCacheSettings> = videoCacheSettings(defaultConfig())
