/**
 * Preload (`node --import tsx --import ./bench/scenarios/legacy/register.ts apps/video-api/src/main.ts`)
 * that gives video-api's `CACHE_MODE=legacy` its reader wrapper: the older design
 * (legacy_cache.ts). Its settings come from the environment: LEGACY_TTL_MS (fixed TTL, ms,
 * default 300000), LEGACY_NULL_TTL_MS (ms, default 60000). Lock 5 s, waiters poll every 50 ms
 * for up to 2 s, as in the seed. With LEGACY_INTERACTIONS=true (the viral scenario's profile), the
 * interaction writes use the older layout too (interactions.ts).
 */
import type { Redis } from 'ioredis'
import { positiveIntegerEnv } from '../env_integer.js'
import { installOldInteractionWrites } from './interactions.js'
import { LegacyCache } from './legacy_cache.js'
import { LegacyVideoReader, type ReaderLike } from './legacy_reader.js'

const envMs = (name: string, fallback: number): number => positiveIntegerEnv(name, 'ms') ?? fallback

;(globalThis as Record<symbol, unknown>)[Symbol.for('video-api.readerWrapper')] = (
  reader: ReaderLike,
  deps: { redis: Redis; prefix: string },
) =>
  new LegacyVideoReader(
    reader,
    new LegacyCache(deps.redis, deps.prefix, {
      ttlMs: envMs('LEGACY_TTL_MS', 300_000),
      nullTtlMs: envMs('LEGACY_NULL_TTL_MS', 60_000),
    }),
  )

if (process.env.LEGACY_INTERACTIONS === 'true') installOldInteractionWrites()
