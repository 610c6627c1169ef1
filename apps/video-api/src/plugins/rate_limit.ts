import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import fp from 'fastify-plugin'
import {
  bindRateLimiterMetrics,
  createRateLimiter,
  type RateLimiter,
  type RateLimitFallback,
  type RateLimitResult,
  type RedisRateLimiter,
} from 'floodgate'
import { ApiError, problemStatus } from '../http/api_error.js'
import { sendProblem } from '../http/problem_handler.js'
import { addressKey } from '../rate_limit/client_key.js'
import { type Quota, UNLIMITED_ROUTES } from '../rate_limit/quotas.js'
import { putRateLimitFields } from '../rate_limit/reply_fields.js'
import { routeLimiters } from '../rate_limit/route_limiters.js'
import { PER_INSTANCE_INSURANCE, type RateLimitSettings } from '../rate_limit/settings.js'

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * On a route with `config.overlapsRateLimit`, the rate-limit decision that Redis is still
     * making: resolves once the request is admitted (its fields on the reply), rejects with the
     * 429 `RATE_LIMITED` {@link ApiError} when it is not. `undefined` when the decision was made
     * before the handler ran (in memory, or on any other route).
     */
    rateLimitPermit: Promise<void> | undefined
  }
  interface FastifyContextConfig {
    /**
     * The handler goes on while Redis decides, so its own Redis reads overlap the decision's
     * round trip; it must await `request.rateLimitPermit` before it queries PostgreSQL or answers
     * (the error handler awaits it before any error answer, so a refused request is a 429 however
     * it ended).
     */
    overlapsRateLimit?: boolean
  }
}

/**
 * Limits every route but {@link UNLIMITED_ROUTES} (probes, metrics): one sliding-window-counter decision per request (in
 * Redis, the decisions of one poll phase sharing one EVALSHA, or from a leased slice in `leased` mode), keyed by the
 * user id when the request is authenticated, else by client IP (IPv6 per /64; `request.ip`, which
 * honours Fastify's `trustProxy` only when configured). Every response carries the IETF
 * `RateLimit-Policy`/`RateLimit` fields and `X-RateLimit-*`; a rejected request gets 429
 * `application/problem+json` with code `RATE_LIMITED` and `Retry-After` (integer seconds).
 * Every decision counts in `floodgate_ratelimit_decisions_total{policy,source,allowed}` on
 * `/metrics` (who decided: Redis, a leased slice, the blocked cache, or a fallback).
 * Registered after the auth hook, which sets `request.userId`, and the flush and metrics plugins.
 */
async function rateLimitPlugin(app: FastifyInstance, options: RateLimitSettings): Promise<void> {
  // the flush consumers' member set counts the live instances
  const liveInstances = () => app.interactionFlush?.liveMembers ?? 1
  const fallback: RateLimitFallback =
    options.fallback === PER_INSTANCE_INSURANCE
      ? { insurance: { share: () => 1 / Math.max(1, liveInstances()) } }
      : options.fallback
  const onStoreError =
    options.onStoreError ??
    ((error: Error) => app.log.debug({ err: error }, 'rate limit decided by the fallback'))
  const limiters: RedisRateLimiter[] = []
  const make = (name: string, quota: Quota): RateLimiter => {
    const limiter = createRateLimiter({
      redis: app.redis,
      prefix: options.prefix,
      name,
      algorithm: 'slidingWindow',
      limit: quota.limit,
      windowMs: quota.windowMs,
      fallback,
      timeoutMs: options.timeoutMs,
      maxWaitMs: options.maxWaitMs,
      blockedCache: true,
      onStoreError,
      mode: options.mode,
    })
    // floodgate_ratelimit_decisions_total{policy,source,allowed}: the dashboard's decisions panel and
    // the fallback alert (ops/)
    bindRateLimiterMetrics(app.metrics, limiter)
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

  app.decorateRequest('rateLimitPermit', undefined)
  const limitersOf = routeLimiters(byClass, byRoute)
  // a callback hook: a decision from memory (leased slice, remembered block) lets the request on
  // synchronously, without the promise and microtask hops of an async hook; Redis only when needed
  app.addHook('onRequest', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const route = request.routeOptions.url
    if (route !== undefined && UNLIMITED_ROUTES.has(route)) {
      done()
      return
    }
    const userId = request.userId
    const chosen = limitersOf(request.method, route)
    const limiter = userId === undefined ? chosen.anonymous : chosen.authenticated
    const key = chosen.byAddress || userId === undefined ? addressKey(request.ip) : `user:${userId}`
    const local = limiter.limitLocal(key)
    if (local !== undefined) {
      answer(request, reply, done, local)
      return
    }
    const decision = limiter.limit(key)
    if (request.routeOptions.config.overlapsRateLimit === true) {
      const permit = decision.then((result) => admit(reply, result))
      // awaited by the handler or the error handler; a request that ends before (aborted) must not crash
      permit.catch(() => {})
      request.rateLimitPermit = permit
      done()
      return
    }
    decision.then((result) => answer(request, reply, done, result), done)
  })
}

/**
 * `request.rateLimitPermit`'s step: the decision's fields on the reply, then the request goes
 * on, or the 429 `RATE_LIMITED` {@link ApiError} (the error handler answers it as {@link answer} does).
 * @throws that error; {@link InvalidArgumentError} when the policy name cannot be carried in the fields.
 */
function admit(reply: FastifyReply, result: RateLimitResult): void {
  putRateLimitFields(reply, result)
  if (!result.allowed) throw new ApiError('RATE_LIMITED', limitedDetail(reply, result))
}

/** The detail of a 429: the policy and the wait (s), from the `Retry-After` field just put on `reply`. */
function limitedDetail(reply: FastifyReply, result: RateLimitResult): string {
  return `rate limit "${result.policy.name}" exceeded; retry in ${reply.getHeader('Retry-After')} s`
}

/**
 * Puts the decision's fields on the reply, then lets the request on (`done()`), or answers 429
 * problem+json without calling `done` (Fastify: a callback hook that sent a reply ends the chain).
 */
function answer(
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
  result: RateLimitResult,
): void {
  try {
    putRateLimitFields(reply, result)
  } catch (error) {
    // a policy name the fields cannot carry: the error handler answers, as from any hook
    done(error as Error)
    return
  }
  if (result.allowed) {
    done()
    return
  }
  sendProblem(reply, request, {
    code: 'RATE_LIMITED',
    status: problemStatus.RATE_LIMITED,
    detail: limitedDetail(reply, result),
  })
}

export default fp(rateLimitPlugin, {
  name: 'rate-limit',
  fastify: '5.x',
  dependencies: ['redis', 'flush', 'metrics'],
  decorators: { request: ['userId'] },
})
