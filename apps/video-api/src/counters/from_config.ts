import { adminIds } from '../config/load.js'
import type { Config } from '../config/types.js'
import type { CountersSettings } from './service.js'

/**
 * Counters settings from the validated config: admins (`ADMIN_USER_IDS`), the counts read's Redis
 * deadline (`REDIS_COMMAND_TIMEOUT_MS`, `REDIS_MAX_WAIT_MS`) and the live-counts layer (`COUNTS_*`).
 */
export function countersFromConfig(config: Config): CountersSettings {
  return {
    adminUserIds: adminIds(config),
    readTimeoutMs: config.redisCommandTimeoutMs,
    readMaxWaitMs: config.redisMaxWaitMs,
    maxAgeMs: config.countsMaxAgeMs,
    maxStaleMs: config.countsMaxStaleMs,
    localMaxEntries: config.countsLocalMaxEntries,
    localMaxBytes: config.countsLocalMaxBytes,
    tracking: config.countsTracking,
  }
}
