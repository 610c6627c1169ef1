import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import {
  createRateLimiter,
  type RateLimiter,
  type RateLimitFallback,
  type RateLimitMode,
  type RedisClient,
  type RedisRateLimiter,
  rateLimitHeaders,
} from 'floodgate'
import { problemStatus } from '../http/api_error.js'
import { sendProblem } from '../http/problem_handler.js'
import { addressKey } from './client_key.js'
import { classify, type Quota, type Quotas, UNLIMITED_ROUTES } from './quotas.js'

/** Options of the rate-limit plugin (the config module fills them from `RATE_LIMIT_*`). */
/** The insurance fallback with a share of 1 / the live instances (`RATE_LIMIT_INSURANCE_PERCENT=0`). */
export const PER_INSTANCE_INSURANCE = 'insurancePerInstance' as const

export interface RateLimitPluginOptions {
  redis: RedisClient
  /** Redis key prefix, e.g. `va` (keys: `<prefix>:rl:{<policy>:<client>}:…`). */
  prefix: string
  quotas: Quotas
  /**
   * While Redis is unreachable: floodgate's RateLimitFallback, or {@link PER_INSTANCE_INSURANCE}
   * (an insurance limiter granting 1 / `liveInstances()` of each quota).
   */
  fallback: RateLimitFallback | typeof PER_INSTANCE_INSURANCE
  /**
   * floodgate's limiter mode: `exact` (one Redis call per request) or `leased` (slices of each quota
   * reserved in Redis, decided locally; given back on close). No default here: `buildApp` and the
   * config fill it from `RATE_LIMIT_MODE` (default in src/config/fields.ts).
   */
  mode: RateLimitMode
  /** How many instances share the quotas now (≥ 1). @default () => 1 */
  liveInstances?: () => number
  /** Idle event-loop time (ms) a Redis decision gets before the fallback answers (floodgate `withinDeadline`). */
  timeoutMs: number
  /** Longest wall-clock wait (ms) for a Redis decision, however busy the process. @default floodgate's `DEADLINE_DEFAULTS.maxWaitMs` */
  maxWaitMs?: number
  /** Called for each Redis failure the fallback absorbed. */
  onStoreError?: (error: Error) => void
}

/**
 * Limits every route but {@link UNLIMITED_ROUTES} (probes, metrics): one sliding-window-counter decision per request (one EVALSHA,
 * or an answer from a leased slice in `leased` mode), keyed by the
 * user id when the request is authenticated, else by client IP (IPv6 per /64; `request.ip`, which
 * honours Fastify's `trustProxy` only when configured). Every response carries the IETF
 * `RateLimit-Policy`/`RateLimit` fields and `X-RateLimit-*`; a rejected request gets 429
 * `application/problem+json` with code `RATE_LIMITED` and `Retry-After` (integer seconds).
 * Register after the auth hook, which sets `request.userId`.
 */
async function rateLimitPlugin(app: FastifyInstance, options: RateLimitPluginOptions): Promise<void> {
  const liveInstances = options.liveInstances ?? (() => 1)
  const fallback: RateLimitFallback =
    options.fallback === PER_INSTANCE_INSURANCE
      ? { insurance: { share: () => 1 / Math.max(1, liveInstances()) } }
      : options.fallback
  const limiters: RedisRateLimiter[] = []
  const make = (name: string, quota: Quota): RateLimiter => {
    const limiter = createRateLimiter({
      redis: options.redis,
      prefix: options.prefix,
      name,
      algorithm: 'slidingWindow',
      limit: quota.limit,
      windowMs: quota.windowMs,
      fallback,
      timeoutMs: options.timeoutMs,
      maxWaitMs: options.maxWaitMs,
      blockedCache: true,
      onStoreError: options.onStoreError,
      mode: options.mode,
    })
    limiters.push(limiter)
    return limiter
  }
  const { quotas } = options
  const byClass = {
    auth: make('auth', quotas.auth),
    write: make('write', quotas.write),
    user: make('user', quotas.user),
    anonymous: make('anonymous', quotas.anonymous),
  }
  const byRoute = new Map(Object.entries(quotas.routes).map(([route, quota]) => [route, make(route, quota)]))

  // leased mode: unused slices go back so the other instances can use them before the window ends
  app.addHook('onClose', async () => {
    await Promise.all(limiters.map((limiter) => limiter.release()))
  })

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const route = request.routeOptions.url
    if (route !== undefined && UNLIMITED_ROUTES.has(route)) return
    const userId = request.userId
    const quotaClass = classify(request.method, route, userId !== undefined)
    const limiter = byRoute.get(`${request.method} ${route}`) ?? byClass[quotaClass]
    const key = quotaClass === 'auth' || userId === undefined ? addressKey(request.ip) : `user:${userId}`
    const result = await limiter.limit(key)
    reply.headers(rateLimitHeaders(result))
    if (result.allowed) return
    return sendProblem(reply, request, {
      code: 'RATE_LIMITED',
      status: problemStatus.RATE_LIMITED,
      detail: `rate limit "${result.policy.name}" exceeded; retry in ${reply.getHeader('Retry-After')} s`,
    })
  })
}

export default fp(rateLimitPlugin, { name: 'video-api-rate-limit', fastify: '5.x' })
