import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import { BloomFilter, type BloomGate, createCache, LockTimeoutError, type RedisClient } from 'floodgate'
import type { Kysely } from 'kysely'
import type { Registry } from 'prom-client'
import type { Database } from '../db/types.js'
import { maintenanceClient } from '../redis/maintenance_client.js'
import { FEED_SIZE } from '../routes/feed.js'
import type { Video } from '../videos/model.js'
import type { VideoReader } from '../videos/reader.js'
import type { VideoWriter } from '../videos/writer.js'
import { CachedVideoReader } from './cached_reader.js'
import { defaultVideoCacheSettings, type VideoCacheSettings } from './settings.js'
import { liveVideoIds } from './video_ids.js'

export interface VideoCacheDeps {
  db: Kysely<Database>
  redis: RedisClient
  /** Redis key prefix of the service. */
  prefix: string
  /** The app's metrics registry (`/metrics`). */
  registry: Registry
  log: FastifyBaseLogger
  reader: VideoReader
  writer: VideoWriter
}

export interface VideoCache {
  reader: CachedVideoReader
  bloom: BloomFilter
  /** The background rebuild started at install (resolves when done or failed; never rejects). */
  rebuilt: Promise<void>
  /** Rebuilds the Bloom filter from the database now. */
  rebuildBloom(): Promise<void>
  close(): void
}

/**
 * Puts the video reads on floodgate's cache: a `video` cache (Bloom-gated,
 * negative caching) and a `feed` cache (fixed TTL), invalidated by the
 * writer's `onVideoChanged` hook after each committed write; a created video
 * is added to the Bloom filter before the create returns. The filter is
 * rebuilt from the database in the background at start (queries answer
 * "maybe" until it is ready).
 */
export function installVideoCache(deps: VideoCacheDeps, settings: VideoCacheSettings = {}): VideoCache {
  const s = { ...defaultVideoCacheSettings, ...settings }
  const bloom = new BloomFilter({
    redis: deps.redis,
    prefix: deps.prefix,
    name: 'videos',
    bits: s.bloomBits,
    hashes: s.bloomHashes,
  })
  // If adding a new id failed even after retries, this instance stops trusting
  // "definitely absent" until the next successful rebuild (never a false negative here).
  let trusted = true
  const gate: BloomGate = {
    mightContain: (items) => (trusted ? bloom.mightContain(items) : Promise.resolve(items.map(() => true))),
  }
  const common = {
    redis: deps.redis,
    prefix: deps.prefix,
    registry: deps.registry,
    redisTimeoutMs: s.redisTimeoutMs,
    lockTtlMs: s.lockTtlMs,
    lockWaitMs: s.lockWaitMs,
  }
  const videos = createCache<Video>({
    ...common,
    name: 'video',
    ttlMs: s.ttlMs,
    negativeTtlMs: s.negativeTtlMs,
    staleWhileRevalidateMs: s.staleWhileRevalidateMs,
    bloom: gate,
    l1: { ttlMs: s.l1TtlMs, maxEntries: s.l1MaxEntries, maxBytes: s.l1MaxBytes },
  })
  const feed = createCache<Video[]>({
    ...common,
    name: 'feed',
    ttlMs: s.feedTtlMs,
    staleWhileRevalidateMs: 0,
    // a few keys (one per feed limit): a small L1 (lru-cache allocates its index for maxEntries up front)
    l1: { ttlMs: s.l1TtlMs, maxEntries: 1_000, maxBytes: s.l1MaxBytes },
  })
  const reader = new CachedVideoReader(deps.reader, videos, feed, s.feedTtlMs)
  for (const cache of [videos, feed]) {
    cache.events.on('background_error', ({ key, error, task }) =>
      deps.log.warn({ err: error, key, task }, 'cache background task failed'),
    )
  }

  // Rebuilds run on their own connection with a roomier command timeout than the read path's
  // (50 ms): under load a 50 ms timeout failed the rebuild at start again and again.
  const rebuildRedis = maintenanceClient(deps.redis, s.bloomRebuildTimeoutMs)
  const rebuilder = new BloomFilter({
    redis: rebuildRedis,
    prefix: deps.prefix,
    name: 'videos',
    bits: s.bloomBits,
    hashes: s.bloomHashes,
  })
  const closing = new AbortController()
  const rebuildBloom = async () => {
    const result = await rebuilder.rebuild(liveVideoIds(deps.db), { lockWaitMs: 0, signal: closing.signal })
    trusted = true
    deps.log.info({ items: result.items, durationMs: result.durationMs }, 'bloom filter rebuilt')
  }
  const rebuildQuietly = () =>
    rebuildBloom().catch((error: unknown) =>
      deps.log.warn({ cause: summarize(error) }, 'bloom filter rebuild failed'),
    )
  // At start a transient Redis error must not leave the gate open for good: retry with backoff
  // (retry base doubling, `bloomRebuildAttempts` attempts), one summarized line per failed attempt;
  // another instance holding the rebuild lock is building it already.
  const rebuildAtStart = async () => {
    for (let attempt = 1; attempt <= s.bloomRebuildAttempts && !closing.signal.aborted; attempt++) {
      try {
        return await rebuildBloom()
      } catch (error) {
        if (error instanceof LockTimeoutError) return deps.log.info('bloom filter rebuild running elsewhere')
        if (closing.signal.aborted) return
        if (attempt === s.bloomRebuildAttempts) {
          deps.log.error(
            { attempt, cause: summarize(error) },
            'bloom filter rebuild failed; giving up: the gate answers "maybe" until a rebuild succeeds',
          )
          return
        }
        const retryInMs = s.bloomRebuildRetryBaseMs * 2 ** (attempt - 1)
        deps.log.warn(
          { attempt, attempts: s.bloomRebuildAttempts, retryInMs, cause: summarize(error) },
          'bloom filter rebuild failed; retrying',
        )
        await sleep(retryInMs, undefined, { signal: closing.signal }).catch(() => undefined)
      }
    }
  }

  deps.writer.onVideoChanged(async (id, change) => {
    if (change === 'created') {
      try {
        await bloom.add([id])
      } catch (error) {
        trusted = false
        deps.log.error({ err: error, id }, 'bloom add failed; gate bypassed here until a rebuild')
        void rebuildQuietly()
      }
    }
    // A created id may have a negative entry from before; updates and deletes change the row.
    await videos.invalidate(id)
    await feed.invalidate([...new Set([FEED_SIZE, ...reader.feedLimits])].map((n) => `recommend:${n}`))
  })

  const rebuilt = s.rebuildBloomAtStart ? rebuildAtStart() : Promise.resolve()
  return {
    reader,
    bloom,
    rebuilt,
    rebuildBloom,
    close() {
      closing.abort()
      videos.close()
      feed.close()
      rebuildRedis.disconnect()
    },
  }
}

/** One line for the log: the error's code and message, and its cause's message (no stack). */
function summarize(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: unknown }).code
  const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : ''
  return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}${cause}`
}
