import type { RedisClient } from 'floodgate'
import { ConfigError } from '../config/config_error.js'
import type { VideoReader } from '../videos/reader.js'

/**
 * `CACHE_MODE=legacy`: the read cache is a {@link VideoReader} wrapper that a
 * module preloaded with `node --import <module>` registered on `globalThis`
 * under this symbol (the benchmark's older design,
 * `bench/scenarios/legacy/register.ts`). The service itself ships no second
 * cache; the switch only lets a benchmark put one in front of the SQL reader.
 */
export const READER_WRAPPER = Symbol.for('video-api.readerWrapper')

/** Wraps the SQL reader with the service's Redis client and key prefix. */
export type ExternalReaderWrapper = (
  reader: VideoReader,
  deps: { redis: RedisClient; prefix: string },
) => VideoReader

/**
 * The registered wrapper.
 * @throws {ConfigError} naming `CACHE_MODE` when no preloaded module registered one.
 */
export function externalReaderWrapper(): ExternalReaderWrapper {
  const wrapper = (globalThis as Record<symbol, unknown>)[READER_WRAPPER]
  if (typeof wrapper !== 'function') {
    throw new ConfigError(
      'CACHE_MODE',
      'legacy needs a reader wrapper preloaded with --import (e.g. bench/scenarios/legacy/register.ts)',
    )
  }
  return wrapper as ExternalReaderWrapper
}
