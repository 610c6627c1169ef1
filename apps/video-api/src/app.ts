import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import {
  bindGuardMetrics,
  type InteractionOptions,
  Interactions,
  KeySpace,
  type RedisClient,
} from 'floodgate'
import type { Kysely } from 'kysely'
import { readInstallationId } from './auth/installation.js'
import { createTokenService } from './auth/tokens.js'
import { installVideoCache, type VideoCache } from './cache/install.js'
import type { VideoCacheSettings } from './cache/settings.js'
import { type CountersSettings, registerCounters } from './counters/register.js'
import { createDbGuard, type DbGuardSettings } from './db/guard.js'
import { QueryCounter } from './db/query_counter.js'
import type { Database } from './db/types.js'
import { refuseAnonymous, registerAuth } from './http/auth.js'
import type { RouteDeps } from './http/deps.js'
import { clientErrorHandler, frameworkErrors } from './http/framework_errors.js'
import { registerMetrics } from './http/metrics.js'
import { swaggerOptions } from './http/openapi.js'
import { registerProblemHandler } from './http/problem_handler.js'
import { echoRequestId, requestId } from './http/request_id.js'
import { OneLineRequestLog } from './http/request_log.js'
import { Problem, Video } from './http/schemas.js'
import { type FlushSettings, startInteractionFlush } from './interactions/flush.js'
import rateLimitPlugin, { type RateLimitPluginOptions } from './rate_limit/plugin.js'
import { adminBloomRoutes } from './routes/admin_bloom.js'
import { authRoutes } from './routes/auth.js'
import { feedRoutes } from './routes/feed.js'
import { healthRoutes } from './routes/health.js'
import { interactionRoutes } from './routes/interactions.js'
import { userRoutes } from './routes/users.js'
import { videoRoutes } from './routes/videos.js'
import { logBase } from './service_info.js'
import { UserRepository } from './users/repository.js'
import { GuardedVideoReader } from './videos/guarded_reader.js'
import { SqlVideoReader, type VideoReader } from './videos/reader.js'
import { VideoWriter } from './videos/writer.js'

export interface AppOptions {
  /** An open database (migrated). The app does not close it. */
  db: Kysely<Database>
  /** An open Redis client. The app does not close it. */
  redis: RedisClient
  /** Prefix of the service's Redis keys. @default 'va' */
  redisPrefix?: string
  /** HS256 secret for bearer tokens. */
  jwtSecret: string
  /** Token lifetime (s). @default 3600 */
  jwtTtlS?: number
  /** @default 65536 (bytes) */
  bodyLimitBytes?: number
  /** @default 10000 (ms) */
  requestTimeoutMs?: number
  /** @default 10000 (ms) */
  connectionTimeoutMs?: number
  /** @default 72000 (ms) */
  keepAliveTimeoutMs?: number
  /** pino options or `false`. @default false */
  logger?: FastifyServerOptions['logger']
  /**
   * The database guard in front of the read path's PostgreSQL work (cache loads, uncached reads,
   * count fallbacks); writes are not guarded. main.ts sets it from DB_GUARD_*.
   * @default maxConcurrent = DB_POOL_MAX's default, the rest floodgate's defaults
   */
  dbGuard?: DbGuardSettings
  /** Wraps the SQL reader (behind the database guard): the seam for the cache issue. @default identity */
  wrapReader?: (reader: VideoReader) => VideoReader
  /** Read cache of videos and the feed (src/cache); `undefined`/`false` = off (tests), main.ts turns it on from config. */
  cache?: boolean | VideoCacheSettings
  /** Counts read path, rankings, epoch monitor and admin (ADMIN_USER_IDS). @default src/counters defaults, no admins */
  counters?: CountersSettings
  /** Interaction write path (partitions, top K, play dedupe window). @default floodgate's defaults */
  interactions?: Omit<InteractionOptions, 'prefix'>
  /** Run this instance's interaction flush consumer (lag metrics on /metrics); main.ts turns it on. @default false */
  interactionFlush?: boolean | FlushSettings
  /** Fastify `trustProxy` (whose X-Forwarded-For gives the client IP). @default false */
  trustProxy?: boolean | string[] | ((address: string, hop: number) => boolean)
  /** Rate limiting of every route (src/rate_limit); `undefined` = off (tests), main.ts turns it on from config. */
  rateLimit?: Omit<RateLimitPluginOptions, 'redis'>
}

/** Builds the video-api Fastify instance on already-open dependencies (tests inject their own). */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: withServiceFields(options.logger ?? false),
    bodyLimit: options.bodyLimitBytes ?? 65_536,
    requestTimeout: options.requestTimeoutMs ?? 10_000,
    connectionTimeout: options.connectionTimeoutMs ?? 10_000,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 72_000,
    trustProxy: options.trustProxy ?? false,
    // requestIdHeader off: genReqId reads x-request-id itself and refuses ids unfit for a log line
    requestIdHeader: false,
    genReqId: requestId,
    logController: new OneLineRequestLog(),
    // false: src/http/draining.ts answers 503 as problem+json while closing.
    return503OnClosing: false,
    frameworkErrors,
    clientErrorHandler,
    forceCloseConnections: 'idle',
    // No silent fixes of input: unknown fields are refused (not stripped), and types are not coerced
    // (a number is not a title). Query strings are declared as strings and parsed in the route.
    // allErrors: a 400 lists every failing field; bodies are capped at bodyLimit and the patterns
    // are linear, so collecting all errors stays cheap.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
  })
  // Every statement of the app goes through this counter (db_queries_total on /metrics).
  const queries = new QueryCounter()
  const db = options.db.withPlugin(queries)
  // Tokens carry this database's installation id (aud): a token from another database is refused.
  const installationId = await readInstallationId(options.db)
  const tokens = createTokenService(options.jwtSecret, options.jwtTtlS ?? 3600, installationId)
  const videoWriter = new VideoWriter(db, (error) =>
    app.log.error({ err: error }, 'onVideoChanged hook failed'),
  )
  const dbGuard = createDbGuard(options.dbGuard)
  const reader = new GuardedVideoReader(new SqlVideoReader(db), dbGuard)
  const deps: RouteDeps = {
    db,
    redis: options.redis,
    keys: new KeySpace(options.redisPrefix ?? 'va'),
    tokens,
    users: new UserRepository(db),
    videos: options.wrapReader ? options.wrapReader(reader) : reader,
    videoWriter,
    dbGuard,
    interactions: new Interactions(options.redis, {
      ...options.interactions,
      prefix: options.redisPrefix ?? 'va',
    }),
  }
  app.decorate('deps', deps)
  // JSON only: other media types get 415 instead of reaching validation as a string.
  app.removeContentTypeParser('text/plain')

  await app.register(swagger, swaggerOptions())
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
  })
  app.addSchema(Problem)
  app.addSchema(Video)
  echoRequestId(app)
  registerProblemHandler(app)
  registerAuth(app, tokens)
  // the flush consumer's member set counts the live instances (it starts below)
  let liveInstances = () => 1
  if (options.rateLimit) {
    await app.register(rateLimitPlugin, {
      ...options.rateLimit,
      liveInstances: () => liveInstances(),
      redis: options.redis,
      onStoreError: (error) => app.log.debug({ err: error }, 'rate limit decided by the fallback'),
    })
  }
  refuseAnonymous(app)
  const registry = registerMetrics(app)
  queries.register(registry)
  bindGuardMetrics(registry, dbGuard)
  let cache: VideoCache | undefined
  if (options.cache) {
    cache = installVideoCache(
      { ...deps, prefix: deps.keys.prefix, registry, log: app.log, reader: deps.videos, writer: videoWriter },
      options.cache === true ? {} : options.cache,
    )
    deps.videos = cache.reader
    const installed = cache
    app.addHook('onClose', async () => installed.close())
  }
  if (options.interactionFlush) {
    const settings = options.interactionFlush === true ? {} : options.interactionFlush
    const flush = startInteractionFlush({
      redis: options.redis,
      db,
      prefix: deps.keys.prefix,
      registry,
      log: app.log,
      settings: { partitions: options.interactions?.partitions, ...settings },
    })
    liveInstances = () => flush.liveMembers
    app.addHook('onClose', () => flush.stop())
  }
  healthRoutes(app, deps)
  authRoutes(app, deps)
  videoRoutes(app, deps)
  userRoutes(app, deps)
  feedRoutes(app, deps)
  const counters = registerCounters(
    app,
    deps,
    { partitions: options.interactions?.partitions, topK: options.interactions?.topK, ...options.counters },
    registry,
  )
  interactionRoutes(app, deps)
  adminBloomRoutes(app, { cache, redis: options.redis, adminUserIds: counters.adminUserIds })
  await app.ready()
  return app
}

/** Logger options with the service name and version on every line (`true` = pino's defaults plus them). */
function withServiceFields(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === false || logger === undefined) return false
  return { base: logBase(), ...(logger === true ? {} : logger) }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Repositories and services the routes use (the cache and counters issues hook in here). */
    deps: RouteDeps
  }
}
