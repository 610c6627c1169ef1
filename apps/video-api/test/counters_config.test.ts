import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config/index.js'
import { countersFromConfig } from '../src/counters/from_config.js'

describe('counters config', () => {
  it('takes admins, the Redis deadline and the live-counts bounds from the config', () => {
    const config = loadConfig({
      env: {
        ADMIN_USER_IDS: '7, 9',
        // values that differ from the defaults, to see each one carried through (nothing waits on them)
        REDIS_COMMAND_TIMEOUT_MS: '80',
        REDIS_MAX_WAIT_MS: '3000',
        COUNTS_MAX_AGE_MS: '500',
        COUNTS_MAX_STALE_MS: '30000',
        COUNTS_LOCAL_MAX_ENTRIES: '1000',
        COUNTS_LOCAL_MAX_BYTES: '2048',
        COUNTS_TRACKING: 'false',
      },
    })
    expect(countersFromConfig(config)).toEqual({
      adminUserIds: ['7', '9'],
      readTimeoutMs: 80,
      readMaxWaitMs: 3000,
      maxAgeMs: 500,
      maxStaleMs: 30_000,
      localMaxEntries: 1000,
      localMaxBytes: 2048,
      tracking: false,
    })
  })
})
