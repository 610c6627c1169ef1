import type { FastifyBaseLogger } from 'fastify'
import {
  type BucketRankings,
  ClientTracking,
  type ConcurrencyGuard,
  CountsReader,
  CountsRecovery,
  createRankings,
  DEADLINE_DEFAULTS,
  type InteractionLayout,
  LIVE_COUNTS_DEFAULTS,
  LiveCounts,
  type RecoveryEvent,
  type RedisClient,
  type SqlDatabase,
} from 'floodgate'
import type { Kysely } from 'kysely'
import { guardedExecutor } from '../db/guard.js'
import type { Database } from '../db/types.js'
import { kyselySqlDatabase } from '../interactions/sql_database.js'
import { maintenanceClient } from '../redis/maintenance_client.js'
import type { CountersMetrics } from './metrics.js'
import { dbCounts } from './overlay.js'
import { videoRebuildReport } from './video_reports.js'

/**
 * Defaults of {@link CountersSettings}, in one place: the library's where it has the option
 * (main.ts passes the field table's `REDIS_*` and `COUNTS_*` values instead).
 */
export const COUNTERS_SETTINGS_DEFAULTS = {
  checkIntervalMs: 5000,
  startupWaitMs: 1000,
  readTimeoutMs: DEADLINE_DEFAULTS.timeoutMs,
  readMaxWaitMs: DEADLINE_DEFAULTS.maxWaitMs,
  maxAgeMs: LIVE_COUNTS_DEFAULTS.maxAgeMs,
  maxStaleMs: LIVE_COUNTS_DEFAULTS.maxStaleMs,
  localMaxEntries: LIVE_COUNTS_DEFAULTS.maxEntries,
  localMaxBytes: LIVE_COUNTS_DEFAULTS.maxBytes,
  tracking: true,
  rankingCacheTtlMs: 5000,
  recoveryCommandTimeoutMs: 5000,
} as const

/** Counters and rankings settings of the service; unset = {@link COUNTERS_SETTINGS_DEFAULTS}. */
export interface CountersSettings {
  /** User ids allowed on `/admin/*` counter endpoints. @default [] (nobody) */
  adminUserIds?: readonly string[]
  /** How often the Redis epoch marker is checked (ms). */
  checkIntervalMs?: number
  /** How long app start waits for the first epoch check / start-up rebuild (ms). */
  startupWaitMs?: number
  /** Idle event-loop time (ms) the pipelined counts read gets (floodgate `withinDeadline`); past it the DB columns are served, marked stale. */
  readTimeoutMs?: number
  /** Longest wall-clock wait (ms) of the counts read, however busy the process. */
  readMaxWaitMs?: number
  /** Freshness bound of the in-process live counts (ms); floodgate `LiveCounts.maxAgeMs`. */
  maxAgeMs?: number
  /** While Redis cannot answer, Redis counts younger than this (ms) are served stale. */
  maxStaleMs?: number
  /** Videos the live-counts layer keeps in process. */
  localMaxEntries?: number
  /** Bytes the live-counts layer keeps in process. */
  localMaxBytes?: number
  /**
   * Read live counts through Redis client-side caching (floodgate `ClientTracking`): served in
   * process until Redis invalidates them; `maxAgeMs` then bounds only reads made while tracking is
   * not established. Not supported on Redis Cluster (`maxAgeMs` applies there).
   */
  tracking?: boolean
  /** How long a merged trending result is fresh (ms). */
  rankingCacheTtlMs?: number
  /** Command timeout (ms) of the epoch monitor's and rebuild's own Redis connection. */
  recoveryCommandTimeoutMs?: number
}

/** What the counter routes and the payload overlay use. */
export interface CountersService {
  reader: CountsReader
  /** The in-process layer over `reader` (and its client tracking) that the overlay and the stats route read. */
  live: LiveCounts
  recovery: CountsRecovery
  rankings: BucketRankings
  sql: SqlDatabase
  adminUserIds: ReadonlySet<string>
  settings: Required<Omit<CountersSettings, 'adminUserIds'>>
  /** Prometheus counters, when the app has a registry. */
  metrics: CountersMetrics | undefined
  /** Stops the epoch monitor and closes its connection. */
  close(): Promise<void>
}

/** Builds the counts reader, the epoch monitor/rebuild and the rankings on the app's Redis and database. */
export function createCountersService(input: {
  redis: RedisClient
  db: Kysely<Database>
  /** The key layout the write path uses (prefix, partitions, top K, tables). */
  layout: InteractionLayout
  log: FastifyBaseLogger
  settings?: CountersSettings
  metrics?: CountersMetrics
  /** The database guard the PostgreSQL fallback runs behind (a shed fallback serves what is known, stale). */
  dbGuard?: ConcurrencyGuard
  /**
   * The app's shared client tracking (`app.clientTracking`), used when `tracking` is on.
   * @default none: the service opens its own pair and closes it with the service
   */
  clientTracking?: () => ClientTracking
}): CountersService {
  const s = input.settings ?? {}
  const d = COUNTERS_SETTINGS_DEFAULTS
  const settings = {
    checkIntervalMs: s.checkIntervalMs ?? d.checkIntervalMs,
    startupWaitMs: s.startupWaitMs ?? d.startupWaitMs,
    readTimeoutMs: s.readTimeoutMs ?? d.readTimeoutMs,
    readMaxWaitMs: s.readMaxWaitMs ?? d.readMaxWaitMs,
    maxAgeMs: s.maxAgeMs ?? d.maxAgeMs,
    maxStaleMs: s.maxStaleMs ?? d.maxStaleMs,
    localMaxEntries: s.localMaxEntries ?? d.localMaxEntries,
    localMaxBytes: s.localMaxBytes ?? d.localMaxBytes,
    tracking: s.tracking ?? d.tracking,
    rankingCacheTtlMs: s.rankingCacheTtlMs ?? d.rankingCacheTtlMs,
    recoveryCommandTimeoutMs: s.recoveryCommandTimeoutMs ?? d.recoveryCommandTimeoutMs,
  }
  const ownTracking = settings.tracking && !input.clientTracking ? new ClientTracking(input.redis) : undefined
  const tracking = settings.tracking ? (ownTracking ?? input.clientTracking?.()) : undefined
  const sql = kyselySqlDatabase(input.db)
  const fallbackSql = input.dbGuard ? guardedExecutor(sql, input.dbGuard) : sql
  // the epoch checks and rebuilds: background work of many Lua steps (see maintenanceClient)
  const recoveryRedis = maintenanceClient(input.redis, settings.recoveryCommandTimeoutMs)
  const recovery = new CountsRecovery({
    redis: recoveryRedis,
    sql,
    ...input.layout,
    checkIntervalMs: settings.checkIntervalMs,
    onEvent: (event) => {
      logRecovery(input.log, event)
      if (event.type === 'rebuilt' || event.type === 'rebuild-aborted')
        input.metrics?.rebuild(event.type === 'rebuilt' ? 'rebuilt' : 'aborted')
    },
  })
  const reader = new CountsReader({
    redis: input.redis,
    ...input.layout,
    timeoutMs: settings.readTimeoutMs,
    maxWaitMs: Math.max(settings.readMaxWaitMs, settings.readTimeoutMs),
    recovery,
  })
  const live = new LiveCounts({
    reader,
    // dbCounts is the one PostgreSQL entry point of the counts read, behind the database guard
    fallback: (ids, viewer) => dbCounts(fallbackSql, ids, viewer),
    maxAgeMs: settings.maxAgeMs,
    maxStaleMs: settings.maxStaleMs,
    maxEntries: settings.localMaxEntries,
    maxBytes: settings.localMaxBytes,
    tracking,
  })
  return {
    sql,
    recovery,
    reader,
    live,
    rankings: createRankings({
      redis: input.redis,
      ...input.layout,
      cacheTtlMs: settings.rankingCacheTtlMs,
    }),
    adminUserIds: new Set(s.adminUserIds ?? []),
    settings,
    metrics: input.metrics,
    close: async () => {
      await recovery.stop()
      live.close()
      ownTracking?.close()
      recoveryRedis.disconnect()
    },
  }
}

function logRecovery(log: FastifyBaseLogger, event: RecoveryEvent): void {
  switch (event.type) {
    case 'epoch-missing':
      log.warn(
        'Redis epoch marker missing: Redis lost its data (or first start); serving counts from PostgreSQL',
      )
      break
    case 'legacy-draining':
      log.warn(
        { streams: event.streams },
        'interaction layout 1 streams still hold events: the counters rebuild waits until the flush has applied them',
      )
      break
    case 'rebuild-started':
      log.info({ mode: event.mode }, 'rebuilding Redis counters and rankings from PostgreSQL')
      break
    case 'rebuilt':
      log.info(
        { ...videoRebuildReport(event.report), epoch: event.epoch },
        'Redis counters rebuilt; serving counts from Redis',
      )
      break
    case 'rebuild-aborted':
      log.warn({ err: event.error }, 'counter rebuild aborted; will retry')
      break
    case 'error':
      log.debug({ err: event.error, phase: event.phase }, 'counter recovery check failed')
      break
  }
}
