import type { FastifyBaseLogger } from 'fastify'
import {
  BloomFilter,
  BloomLifecycle,
  type BloomLifecycleEvent,
  type BloomRebuildReport,
  BloomReplica,
  bindBloomReplicaMetrics,
  ClientTracking,
  createCache,
  type RedisClient,
} from 'floodgate'
import type { Kysely } from 'kysely'
import type { Registry } from 'prom-client'
import type { Database } from '../db/types.js'
import { VideoApiError } from '../errors/index.js'
import { maintenanceClient } from '../redis/maintenance_client.js'
import { FEED_SIZE, type Video } from '../videos/model.js'
import type { VideoReader } from '../videos/reader.js'
import type { VideoWriter } from '../videos/writer.js'
import { CachedVideoReader } from './cached_reader.js'
import { defaultVideoCacheSettings } from './from_config.js'
import type { VideoCacheSettings } from './settings.js'
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
  /**
   * The app's shared client tracking (`app.clientTracking`), used when `l1Tracking` is on.
   * @default none: the cache opens its own pair and closes it with the cache
   */
  clientTracking?: () => ClientTracking
}

/** What a Bloom rebuild reports (`POST /admin/rebuild/bloom` answers it). */
export type { BloomRebuildReport }

export interface VideoCache {
  reader: CachedVideoReader
  bloom: BloomFilter
  /** The video cache's gate: the filter's bits in process memory, kept current by its announcements. */
  replica: BloomReplica
  /**
   * The background rebuild started at install: settles when a rebuild succeeded (here or, at
   * start, on another instance) or the cache closed; never rejects.
   */
  rebuilt: Promise<void>
  /**
   * Rebuilds the Bloom filter from the database now, once (no retry).
   * @throws {LockTimeoutError} when a rebuild runs already (this or another instance).
   * @throws {VideoIdsReadError} when reading the ids from PostgreSQL failed.
   * @throws any other error: Redis failed or the rebuild was interrupted (lock lost, closing); the
   *   served generation is unchanged.
   */
  rebuildBloom(): Promise<BloomRebuildReport>
  close(): void
}

/** Reading the video ids from PostgreSQL failed during a Bloom rebuild. `code`: `VIDEO_API_VIDEO_IDS_READ_FAILED`. */
export class VideoIdsReadError extends VideoApiError {
  constructor(cause: unknown) {
    super('VIDEO_API_VIDEO_IDS_READ_FAILED', 'reading the video ids from PostgreSQL failed', { cause })
  }
}

/**
 * Puts the video reads on floodgate's cache: a `video` cache (Bloom-gated,
 * negative caching) and a `feed` cache (fixed TTL), invalidated by the
 * writer's `onVideoChanged` hook after each committed write; a created video
 * is added to the Bloom filter (and announced to every instance's replica)
 * before the create returns. The gate is a {@link BloomReplica}: "definitely
 * absent" comes from process memory (asked before L2), started here and
 * closed with the cache. The filter is
 * rebuilt from the database in the background at start (queries answer
 * "maybe" until it is ready), retried with capped, jittered backoff until a
 * rebuild succeeds or the cache closes, and again the same way when a query
 * finds it missing later (Redis lost its data); `rebuildBloom()` rebuilds it on
 * demand.
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
  // Rebuilds and replica loads get their own connection: the read path's command timeout
  // (REDIS_COMMAND_TIMEOUT_MS) is too short for a rebuild on a loaded Redis.
  const rebuildRedis = maintenanceClient(deps.redis, s.bloomRebuildTimeoutMs)
  const replica = new BloomReplica({
    filter: bloom,
    loadRedis: rebuildRedis,
    deadline: { timeoutMs: s.redisTimeoutMs, maxWaitMs: Math.max(s.redisMaxWaitMs, s.redisTimeoutMs) },
  })
  void replica.start()
  bindBloomReplicaMetrics(deps.registry, 'videos', replica)
  const lifecycle = new BloomLifecycle({
    filter: bloom,
    // the same filter on the maintenance connection: rebuilds and `ready` probes
    rebuilder: new BloomFilter({
      redis: rebuildRedis,
      prefix: deps.prefix,
      name: 'videos',
      bits: s.bloomBits,
      hashes: s.bloomHashes,
    }),
    answers: replica,
    source: () => tagReadErrors(liveVideoIds(deps.db)),
    retryBaseMs: s.bloomRebuildRetryBaseMs,
    retryMaxMs: s.bloomRebuildRetryMaxMs,
    onEvent: (event) => logBloomEvent(deps.log, event),
  })
  const common = {
    redis: deps.redis,
    prefix: deps.prefix,
    registry: deps.registry,
    redisTimeoutMs: s.redisTimeoutMs,
    redisMaxWaitMs: Math.max(s.redisMaxWaitMs, s.redisTimeoutMs),
    lockTtlMs: s.lockTtlMs,
    lockWaitMs: s.lockWaitMs,
  }
  // the hot path's L1 kept until Redis invalidates it: no L2 GET for a hot video that does not change
  const ownTracking =
    s.l1Tracking && !deps.clientTracking
      ? new ClientTracking(deps.redis, { connectionName: 'video-api-cache' })
      : undefined
  const tracking = s.l1Tracking ? (ownTracking ?? deps.clientTracking?.()) : undefined
  const videos = createCache<Video>({
    ...common,
    name: 'video',
    ttlMs: s.ttlMs,
    negativeTtlMs: s.negativeTtlMs,
    staleWhileRevalidateMs: s.staleWhileRevalidateMs,
    bloom: lifecycle.gate,
    l1: { ttlMs: s.l1TtlMs, maxEntries: s.l1MaxEntries, maxBytes: s.l1MaxBytes, tracking },
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

  deps.writer.onVideoChanged(async (id, change) => {
    if (change === 'created') await lifecycle.add([id])
    // A created id may have a negative entry from before; updates and deletes change the row.
    await videos.invalidate(id)
    await feed.invalidate([...new Set([FEED_SIZE, ...reader.feedLimits])].map((n) => `recommend:${n}`))
  })

  const rebuilt = s.rebuildBloomAtStart ? lifecycle.start() : Promise.resolve()
  return {
    reader,
    bloom,
    replica,
    rebuilt,
    rebuildBloom: () => lifecycle.rebuild(),
    close() {
      lifecycle.close()
      replica.close()
      videos.close()
      feed.close()
      ownTracking?.close()
      rebuildRedis.disconnect()
    },
  }
}

/** The id source, with a database failure told apart from a Redis one. */
async function* tagReadErrors(ids: AsyncIterable<string[]>): AsyncGenerator<string[]> {
  const iterator = ids[Symbol.asyncIterator]()
  try {
    for (;;) {
      let next: IteratorResult<string[]>
      try {
        next = await iterator.next()
      } catch (error) {
        throw new VideoIdsReadError(error)
      }
      if (next.done) return
      yield next.value
    }
  } finally {
    await iterator.return?.()
  }
}

/** The lifecycle's events as the service's log lines. */
function logBloomEvent(log: FastifyBaseLogger, event: BloomLifecycleEvent): void {
  switch (event.type) {
    case 'rebuilt':
      log.info(event.report, 'bloom filter rebuilt')
      break
    case 'rebuild-failed': {
      const { attempt, retryInMs, error } = event
      log.warn({ attempt, retryInMs, cause: summarize(error) }, 'bloom filter rebuild failed; retrying')
      break
    }
    case 'rebuild-elsewhere':
      log.info({ retryInMs: event.retryInMs }, 'bloom filter rebuild running elsewhere; waiting')
      break
    case 'rebuilt-elsewhere':
      log.info({ generation: event.generation }, 'bloom filter rebuilt by another instance')
      break
    case 'add-failed':
      log.error(
        { err: event.error, id: event.ids[0] },
        'bloom add failed; gate bypassed here until a rebuild',
      )
      break
    case 'missing':
      log.warn('bloom filter missing in Redis (data lost?); rebuilding it from PostgreSQL')
      break
  }
}

/** One line for the log: the error's code and message, and its cause's message (no stack). */
function summarize(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: unknown }).code
  const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : ''
  return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}${cause}`
}
