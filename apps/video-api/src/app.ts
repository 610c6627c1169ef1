import { maxHeaderSize } from 'node:http'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { InteractionOptions, RedisClient } from 'floodgate'
import type { Kysely } from 'kysely'
import type { VideoCacheSettings } from './cache/settings.js'
import { defaultConfig } from './config/load.js'
import type { CountersSettings } from './counters/service.js'
import type { DbGuardSettings } from './db/guard.js'
import type { Database } from './db/types.js'
import { refuseAnonymous, registerAuth } from './http/auth.js'
import { clientErrorHandler, frameworkErrors } from './http/framework_errors.js'
import { swaggerOptions } from './http/openapi.js'
import { registerProblemHandler } from './http/problem_handler.js'
import { echoRequestId, requestId } from './http/request_id.js'
import { OneLineRequestLog } from './http/request_log.js'
import { Problem, Video } from './http/schemas.js'
import type { FlushSettings } from './interactions/flush.js'
import { deferredChildLogger } from './log/deferred_child.js'
import { requestSerializers } from './log/request_line.js'
import countersPlugin from './plugins/counters.js'
import databasePlugin from './plugins/database.js'
import flushPlugin from './plugins/flush.js'
import interactionsPlugin from './plugins/interactions.js'
import metricsPlugin from './plugins/metrics.js'
import rateLimitPlugin from './plugins/rate_limit.js'
import redisPlugin from './plugins/redis.js'
import repositoriesPlugin from './plugins/repositories.js'
import tokensPlugin from './plugins/tokens.js'
import videosPlugin from './plugins/videos.js'
import type { RateLimitSettings } from './rate_limit/settings.js'
import { adminBloomRoutes } from './routes/admin_bloom.js'
import { adminCounterRoutes } from './routes/admin_counters.js'
import { authRoutes } from './routes/auth.js'
import { feedRoutes } from './routes/feed.js'
import { healthRoutes } from './routes/health.js'
import { interactionRoutes } from './routes/interactions.js'
import { myInteractionRoutes } from './routes/my_interactions.js'
import { rankingRoutes } from './routes/rankings.js'
import { userRoutes } from './routes/users.js'
import { videoStatsRoutes } from './routes/video_stats.js'
import { videoRoutes } from './routes/videos.js'
import { logBase } from './service_info.js'
import type { VideoReader } from './videos/reader.js'

/** Unset options take the field table's defaults (src/config/fields.ts). */
const defaults = defaultConfig()

export interface AppOptions {
  /** An open database (migrated). The app does not close it. */
  db: Kysely<Database>
  /** An open Redis client. The app does not close it. */
  redis: RedisClient
  /** Prefix of the service's Redis keys. @default the field table's `REDIS_PREFIX` */
  redisPrefix?: string
  /** HS256 secret for bearer tokens. */
  jwtSecret: string
  /** Token lifetime (s). @default the field table's `JWT_TTL_S` */
  jwtTtlS?: number
  /** How long (ms) a user PostgreSQL confirmed is trusted on writes. @default the field table's `AUTH_KNOWN_USER_TTL_MS` */
  knownUserTtlMs?: number
  /** Maximum request body (bytes). @default the field table's `BODY_LIMIT_BYTES` */
  bodyLimitBytes?: number
  /** Time to receive a whole request (ms). @default the field table's `REQUEST_TIMEOUT_MS` */
  requestTimeoutMs?: number
  /** Idle socket timeout (ms). @default the field table's `CONNECTION_TIMEOUT_MS` */
  connectionTimeoutMs?: number
  /** Keep-alive idle timeout (ms). @default the field table's `KEEP_ALIVE_TIMEOUT_MS` */
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
  /**
   * Rate limiting of every route (src/rate_limit); `undefined` = off (tests), main.ts turns it on from
   * config. `mode` defaults to RATE_LIMIT_MODE's default.
   */
  rateLimit?: Omit<RateLimitSettings, 'mode'> & Partial<Pick<RateLimitSettings, 'mode'>>
}

/**
 * Builds the video-api Fastify instance on already-open dependencies (tests inject their own).
 * Each capability is a plugin in src/plugins/ that decorates the instance once and names the
 * plugins it needs; routes reach every service as `app.<name>`.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    logger: withServiceFields(options.logger ?? false),
    bodyLimit: options.bodyLimitBytes ?? defaults.bodyLimitBytes,
    requestTimeout: options.requestTimeoutMs ?? defaults.requestTimeoutMs,
    connectionTimeout: options.connectionTimeoutMs ?? defaults.connectionTimeoutMs,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? defaults.keepAliveTimeoutMs,
    trustProxy: options.trustProxy ?? false,
    // requestIdHeader off: genReqId reads x-request-id itself and refuses ids unfit for a log line
    requestIdHeader: false,
    genReqId: requestId,
    logController: new OneLineRequestLog(),
    // no pino child per request unless something logs during it (src/log/deferred_child.ts)
    childLoggerFactory: deferredChildLogger,
    // false: src/http/draining.ts answers 503 as problem+json while closing.
    return503OnClosing: false,
    frameworkErrors,
    clientErrorHandler,
    forceCloseConnections: 'idle',
    // The router never refuses a path parameter for its length (Fastify's default 100 answers 414
    // before any hook, so before the token check): the route's schema names the parameter and its
    // limit in a 400. Node's header limit (431, request line included) bounds it; no route has a regex.
    routerOptions: { maxParamLength: maxHeaderSize },
    // No silent fixes of input: unknown fields refused, no type coercion (query strings are parsed
    // in the route); allErrors lists every failing field, cheap with capped bodies and linear patterns.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
  })
  await app.register(databasePlugin, { db: options.db, guard: options.dbGuard })
  await app.register(redisPlugin, {
    redis: options.redis,
    prefix: options.redisPrefix ?? defaults.redisPrefix,
  })
  await app.register(tokensPlugin, { secret: options.jwtSecret, ttlS: options.jwtTtlS ?? defaults.jwtTtlS })
  await app.register(repositoriesPlugin)
  await app.register(interactionsPlugin, options.interactions ?? {})
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
  registerAuth(app, { knownUserTtlMs: options.knownUserTtlMs ?? defaults.authKnownUserTtlMs })
  // after the problem handler: a route takes the error handler set when it is registered
  await app.register(metricsPlugin)
  const flush = options.interactionFlush
  await app.register(flushPlugin, {
    enabled: Boolean(flush),
    settings: flush === true || !flush ? {} : flush,
  })
  if (options.rateLimit) {
    await app.register(rateLimitPlugin, {
      ...options.rateLimit,
      mode: options.rateLimit.mode ?? defaults.rateLimitMode,
    })
  }
  refuseAnonymous(app)
  await app.register(videosPlugin, { cache: options.cache, wrapReader: options.wrapReader })
  healthRoutes(app)
  authRoutes(app)
  videoRoutes(app)
  userRoutes(app)
  feedRoutes(app)
  await app.register(countersPlugin, options.counters ?? {})
  videoStatsRoutes(app)
  myInteractionRoutes(app)
  rankingRoutes(app)
  adminCounterRoutes(app)
  interactionRoutes(app)
  adminBloomRoutes(app)
  await app.ready()
  return app
}

/**
 * Logger options with the service name and version on every line (`true` = pino's defaults plus
 * them), and our copies of Fastify's `req`/`res` serializers (the hand-written request line needs
 * to know they are the ones in use; `serializers` in `logger` replaces them).
 */
function withServiceFields(logger: FastifyServerOptions['logger']): FastifyServerOptions['logger'] {
  if (logger === false || logger === undefined) return false
  return { base: logBase(), serializers: requestSerializers, ...(logger === true ? {} : logger) }
}
