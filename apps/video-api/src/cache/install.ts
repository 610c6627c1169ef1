import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyBaseLogger } from 'fastify'
import {
  BloomFilter,
  type BloomGate,
  BloomReplica,
  bindBloomReplicaMetrics,
  createCache,
  LockTimeoutError,
  type RedisClient,
} from 'floodgate'
import type { Kysely } from 'kysely'
import type { Registry } from 'prom-client'
import type { Database } from '../db/types.js'
import { VideoApiError } from '../errors/index.js'
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

/** What a Bloom rebuild reports (`POST /admin/rebuild/bloom` answers it). */
export interface BloomRebuildReport {
  /** Live video ids written into the new generation. */
  items: number
  /** Wall time of the rebuild (ms). */
  durationMs: number
  /** The generation now served. */
  generation: number
  /** Filter size m (bits), hash functions k, shard keys. */
  bits: number
  hashes: number
  shards: number
}

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
  // Rebuilds and replica loads run on their own connection with a roomier command timeout than
  // the read path's (50 ms): under load a 50 ms timeout failed the rebuild at start again and again.
  const rebuildRedis = maintenanceClient(deps.redis, s.bloomRebuildTimeoutMs)
  const replica = new BloomReplica({
    filter: bloom,
    loadRedis: rebuildRedis,
    deadline: { timeoutMs: s.redisTimeoutMs, maxWaitMs: Math.max(s.redisMaxWaitMs, s.redisTimeoutMs) },
  })
  void replica.start()
  bindBloomReplicaMetrics(deps.registry, 'videos', replica)
  // If adding a new id failed even after retries, this instance stops trusting
  // "definitely absent" until the next successful rebuild (never a false negative here).
  let trusted = true
  const gate: BloomGate = {
    inProcess: true,
    mightContain: (items) => (trusted ? replica.mightContain(items) : Promise.resolve(items.map(() => true))),
  }
  const common = {
    redis: deps.redis,
    prefix: deps.prefix,
    registry: deps.registry,
    redisTimeoutMs: s.redisTimeoutMs,
    redisMaxWaitMs: Math.max(s.redisMaxWaitMs, s.redisTimeoutMs),
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

  const rebuilder = new BloomFilter({
    redis: rebuildRedis,
    prefix: deps.prefix,
    name: 'videos',
    bits: s.bloomBits,
    hashes: s.bloomHashes,
  })
  const closing = new AbortController()
  // Adds that failed since construction: a rebuild restores trust only if none failed after it
  // began (the source holds every id committed before it is read, not ids committed later).
  let failedAdds = 0
  const rebuildBloom = async (): Promise<BloomRebuildReport> => {
    const failedBefore = failedAdds
    const result = await rebuilder.rebuild(tagReadErrors(liveVideoIds(deps.db)), {
      lockWaitMs: 0,
      signal: closing.signal,
    })
    if (failedAdds === failedBefore) trusted = true
    const report = { ...result, bits: bloom.bits, hashes: bloom.hashes, shards: bloom.shards }
    deps.log.info(report, 'bloom filter rebuilt')
    return report
  }
  /** The generation `ready` points at; undefined when Redis did not answer. */
  const readyGeneration = async (): Promise<string | null | undefined> =>
    rebuildRedis.hget(bloom.keys(0).meta, 'ready').catch(() => undefined)

  /**
   * Retries {@link rebuildBloom} until it succeeds or the cache closes (no attempt limit: giving
   * up would leave the gate answering "maybe" until a restart). Between attempts: exponential
   * backoff from `bloomRebuildRetryBaseMs`, capped at `bloomRebuildRetryMaxMs`, with equal jitter
   * (a wait drawn in [d/2, d]) so instances that failed together do not retry together. One
   * summarized warning per failed attempt (no stack). When another instance holds the rebuild
   * lock, it waits the same way; with `acceptElsewhere`, a generation that instance publishes
   * meanwhile ends the loop (at start that is as good as our own rebuild).
   */
  const retryRebuild = async (acceptElsewhere: boolean): Promise<void> => {
    let toldElsewhere = false
    for (let attempt = 1; !closing.signal.aborted; attempt++) {
      let seen: string | null | undefined
      try {
        await rebuildBloom()
        if (trusted) return
      } catch (error) {
        if (closing.signal.aborted) return
        const retryInMs = backoffMs(attempt, s.bloomRebuildRetryBaseMs, s.bloomRebuildRetryMaxMs)
        if (error instanceof LockTimeoutError) {
          seen = await readyGeneration()
          if (!toldElsewhere) deps.log.info({ retryInMs }, 'bloom filter rebuild running elsewhere; waiting')
          toldElsewhere = true
        } else {
          deps.log.warn(
            { attempt, retryInMs, cause: summarize(error) },
            'bloom filter rebuild failed; retrying',
          )
        }
        await sleep(retryInMs, undefined, { signal: closing.signal, ref: false }).catch(() => undefined)
        // `trusted` false: an add failed here, so only our own rebuild is known to hold that id
        if (acceptElsewhere && trusted && seen !== undefined && !closing.signal.aborted) {
          const now = await readyGeneration()
          if (now !== undefined && now !== null && now !== seen)
            return deps.log.info({ generation: Number(now) }, 'bloom filter rebuilt by another instance')
        }
      }
    }
  }
  // One retry loop at a time: an add that failed while the loop runs is covered by its next
  // attempt (the rebuild reads every committed id), so it need not start a second loop.
  let retrying: Promise<void> | undefined
  const rebuildUntilDone = (acceptElsewhere: boolean): Promise<void> => {
    retrying ??= retryRebuild(acceptElsewhere).finally(() => {
      retrying = undefined
    })
    return retrying
  }

  deps.writer.onVideoChanged(async (id, change) => {
    if (change === 'created') {
      try {
        await bloom.add([id])
      } catch (error) {
        trusted = false
        failedAdds++
        deps.log.error({ err: error, id }, 'bloom add failed; gate bypassed here until a rebuild')
        void rebuildUntilDone(false)
      }
    }
    // A created id may have a negative entry from before; updates and deletes change the row.
    await videos.invalidate(id)
    await feed.invalidate([...new Set([FEED_SIZE, ...reader.feedLimits])].map((n) => `recommend:${n}`))
  })

  const rebuilt = s.rebuildBloomAtStart ? rebuildUntilDone(true) : Promise.resolve()
  if (s.rebuildBloomAtStart) {
    // The filter vanished after it was built (Redis lost its data: restart without persistence,
    // failover to an empty replica): queries answer "maybe" and every missing id reaches the
    // database. Rebuild it as at start instead of waiting for a restart or an admin.
    // One check at a time; `ready` read afresh, so a query that raced a publish starts nothing.
    let checking = false
    bloom.on('failOpen', ({ reason }) => {
      if (reason !== 'not-ready' || retrying !== undefined || checking || closing.signal.aborted) return
      checking = true
      void readyGeneration()
        .then((ready) => {
          if (ready !== null || retrying !== undefined || closing.signal.aborted) return
          deps.log.warn('bloom filter missing in Redis (data lost?); rebuilding it from PostgreSQL')
          void rebuildUntilDone(true)
        })
        .finally(() => {
          checking = false
        })
    })
  }
  return {
    reader,
    bloom,
    replica,
    rebuilt,
    rebuildBloom,
    close() {
      closing.abort()
      replica.close()
      videos.close()
      feed.close()
      rebuildRedis.disconnect()
    },
  }
}

/** Wait before the retry after failed attempt `attempt` (1-based), in ms: min(max, base·2^(attempt−1)), equal jitter. */
export function backoffMs(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const capped = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30))
  return Math.round(capped / 2 + random() * (capped / 2))
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

/** One line for the log: the error's code and message, and its cause's message (no stack). */
function summarize(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: unknown }).code
  const cause = error.cause instanceof Error ? ` (cause: ${error.cause.message})` : ''
  return `${typeof code === 'string' ? `${code}: ` : ''}${error.message}${cause}`
}
