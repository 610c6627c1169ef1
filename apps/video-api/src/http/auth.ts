import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { KnownUsers } from '../auth/known_users.js'
import { DatabaseOutageLog } from '../db/outage_log.js'
import { unauthorized } from './api_error.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Id of the authenticated user, when a valid bearer token came with the request. */
    userId: string | undefined
  }
  interface FastifyContextConfig {
    /**
     * The route answers on its own terms whatever `Authorization` carries (probes, /metrics): a load
     * balancer or scraper that forwards a stale header must not see the instance as down.
     */
    ignoresAuthorization?: boolean
  }
}

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** A route that declares `security` in its schema needs a user. */
function needsUser(request: FastifyRequest): boolean {
  const security = (request.routeOptions.schema as { security?: unknown[] } | undefined)?.security
  return security !== undefined && security.length > 0
}

/** Options of {@link registerAuth}. */
export interface AuthOptions {
  /** How long (ms) a user PostgreSQL confirmed is trusted on writes. @default the field table's `AUTH_KNOWN_USER_TTL_MS` */
  knownUserTtlMs?: number
}

/**
 * Reads `Authorization: Bearer <jwt>` on every request. No header: anonymous
 * ({@link refuseAnonymous} turns that into a 401 where a user is needed).
 * A header that is present but malformed, expired, tampered, signed with
 * another algorithm or issued for another database is refused with 401 even on
 * public routes. On writes (any method but GET, HEAD, OPTIONS) the token's user
 * must also exist in the database (a {@link KnownUsers} LRU keeps that cheap):
 * a validly signed token of a user the database does not have (e.g. after a
 * reset that kept service_meta) gets 401 instead of writing events the flush
 * can never apply (foreign keys). Reads skip that lookup. While PostgreSQL
 * cannot be reached, the signed token alone is accepted (KnownUsers' policy),
 * logged as a dependency outage (warn, one line per 10 s). Routes whose config sets
 * `ignoresAuthorization` skip the header altogether (anonymous).
 */
export function registerAuth(app: FastifyInstance, options: AuthOptions = {}): void {
  const tokens = app.tokens
  app.decorateRequest('userId', undefined)
  const outage = new DatabaseOutageLog()
  const known = new KnownUsers((id) => app.users.exists(id), {
    ttlMs: options.knownUserTtlMs,
    onUnverified: (error) => outage.note(app.log, 'user-check', error),
  })
  const invalid = (reply: FastifyReply, detail: string) => {
    // RFC 6750 §3: a token was sent but cannot be used
    reply.header('www-authenticate', 'Bearer error="invalid_token"')
    return unauthorized(detail)
  }
  // a callback hook: anonymous requests and reads answer at once, without a promise per request
  app.addHook('onRequest', (request, reply, done) => {
    const header = request.headers.authorization
    if (header === undefined || request.routeOptions.config.ignoresAuthorization) return done()
    const match = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(header)
    const userId = match ? tokens.verify(match[1]!) : undefined
    if (userId === undefined) return done(invalid(reply, 'bearer token is malformed, expired or invalid'))
    if (READ_METHODS.has(request.method)) {
      request.userId = userId
      return done()
    }
    known.check(userId).then(
      (check) => {
        if (check === 'missing') return done(invalid(reply, 'the token is for a user that does not exist'))
        request.userId = userId
        done()
      },
      (error: Error) => done(error), // not an outage (those are `unverified`): the problem handler answers it
    )
  })
}

/**
 * Refuses an anonymous request with 401 (`WWW-Authenticate: Bearer`) on a route whose schema declares
 * `security`. An `onRequest` hook, so it runs before the body is parsed and validated: an anonymous
 * write with an invalid body is a 401, not a 400. Register it after the rate limiter, so that
 * anonymous writes still count against the write quota.
 */
export function refuseAnonymous(app: FastifyInstance): void {
  // a callback hook: no promise on every request that passes
  app.addHook('onRequest', (request, _reply, done) => {
    done(request.userId === undefined && needsUser(request) ? unauthorized() : undefined)
  })
}

/** The authenticated user id. @throws {ApiError} `UNAUTHORIZED` when the request is anonymous. */
export function requireUser(request: FastifyRequest): string {
  if (request.userId === undefined) throw unauthorized()
  return request.userId
}
