import { describe, expect, it } from 'vitest'
import { externalReaderWrapper, READER_WRAPPER } from '../src/cache/external_reader.js'
import { cacheFromConfig } from '../src/cache/from_config.js'
import { ConfigError, loadConfig } from '../src/config/index.js'

describe('cache configuration', () => {
  it('defaults follow the spec: TTL 300–600 s, negative 60 s, lock 5 s, wait 2 s, feed 300 s, Bloom 10M bits × 7', () => {
    const settings = cacheFromConfig(loadConfig({ env: {} }))
    expect(settings).toMatchObject({
      ttlMs: { minMs: 300_000, maxMs: 600_000 },
      negativeTtlMs: 60_000,
      lockTtlMs: 5_000,
      lockWaitMs: 2_000,
      feedTtlMs: 300_000,
      bloomBits: 10_000_000,
      bloomHashes: 7,
      // L1 bounded by bytes (64 MiB) rather than by a small entry count
      l1MaxEntries: 200_000,
      l1MaxBytes: 64 * 1024 * 1024,
    })
  })

  it('is overridable and can be turned off', () => {
    const config = loadConfig({
      env: { CACHE_TTL_MIN_MS: '1000', CACHE_TTL_MAX_MS: '1000', FEED_CACHE_TTL_MS: '5000' },
    })
    expect(cacheFromConfig(config)).toMatchObject({ ttlMs: { minMs: 1000, maxMs: 1000 }, feedTtlMs: 5000 })
    expect(cacheFromConfig(loadConfig({ env: { CACHE_ENABLED: 'false' } }))).toBe(false)
  })

  it('rejects bad values naming the field', () => {
    expect(() => loadConfig({ env: { CACHE_TTL_MIN_MS: '9000', CACHE_TTL_MAX_MS: '5000' } })).toThrow(
      /CACHE_TTL_MAX_MS/,
    )
    expect(() => loadConfig({ env: { BLOOM_HASHES: '0' } })).toThrow(ConfigError)
    // a cap below the first wait: refused at start, not silently used as every wait
    expect(() =>
      loadConfig({ env: { BLOOM_REBUILD_RETRY_BASE_MS: '5000', BLOOM_REBUILD_RETRY_MAX_MS: '100' } }),
    ).toThrow(/^BLOOM_REBUILD_RETRY_MAX_MS: must be at least BLOOM_REBUILD_RETRY_BASE_MS \(5000\)/)
    expect(
      loadConfig({ env: { BLOOM_REBUILD_RETRY_BASE_MS: '5000', BLOOM_REBUILD_RETRY_MAX_MS: '5000' } })
        .bloomRebuildRetryMaxMs,
    ).toBe(5000)
    expect(() => loadConfig({ env: { CACHE_NEGATIVE_TTL_MS: 'soon' } })).toThrow(/CACHE_NEGATIVE_TTL_MS/)
  })

  it('CACHE_MODE: floodgate by default; none and legacy turn floodgate off; legacy needs a preloaded wrapper', () => {
    expect(loadConfig({ env: {} }).cacheMode).toBe('floodgate')
    expect(cacheFromConfig(loadConfig({ env: { CACHE_MODE: 'none' } }))).toBe(false)
    expect(cacheFromConfig(loadConfig({ env: { CACHE_MODE: 'legacy' } }))).toBe(false)
    expect(() => loadConfig({ env: { CACHE_MODE: 'redis' } })).toThrow(/CACHE_MODE/)
    const registry = globalThis as Record<symbol, unknown>
    expect(() => externalReaderWrapper()).toThrow(/CACHE_MODE/)
    const wrapper = (reader: unknown) => reader
    registry[READER_WRAPPER] = wrapper
    try {
      expect(externalReaderWrapper()).toBe(wrapper)
    } finally {
      delete registry[READER_WRAPPER]
    }
  })
})
