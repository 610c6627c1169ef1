import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { OverloadedError } from 'floodgate'
import { DatabaseOutageLog } from '../db/outage_log.js'
import { DB_UNREACHABLE_RETRY_AFTER_S, isDatabaseUnreachable } from '../db/unreachable.js'
import { ApiError, type FieldError, type ProblemCode, problemStatus } from './api_error.js'
import { refuseWhileClosing } from './draining.js'

const statusCodes: Record<number, ProblemCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  503: 'UNAVAILABLE',
}

/** One failing field of a request: `path` is a JSON pointer prefixed by the part (`/body/title`, `/params/id`). */
/** What a problem+json answer is made of; `errors` lists the failing fields of a 400 `VALIDATION_FAILED`. */
export interface ProblemFields {
  code: ProblemCode
  status: number
  detail: string
  errors?: FieldError[]
}

interface AjvError {
  instancePath?: string
  keyword?: string
  message?: string
  params?: {
    missingProperty?: string
    additionalProperty?: string
    allowedValue?: unknown
    allowedValues?: unknown[]
  }
}

/**
 * Fastify's validation errors (Ajv's, with `allErrors`), one entry per failing field. A union of
 * literals (TypeBox `Union([Literal…])`) fails as one `const` error per branch plus an `anyOf`:
 * those become one "must be one of: …" naming the allowed values, as an `enum` would.
 */
function fieldErrors(validation: AjvError[], context: string | undefined): FieldError[] {
  const allowed = new Map<string, unknown[]>()
  for (const v of validation)
    if (v.keyword === 'const')
      allowed.set(v.instancePath ?? '', [
        ...(allowed.get(v.instancePath ?? '') ?? []),
        v.params?.allowedValue,
      ])
  const unions = new Set(validation.filter((v) => v.keyword === 'anyOf').map((v) => v.instancePath ?? ''))
  const out: FieldError[] = []
  for (const v of validation) {
    const at = v.instancePath ?? ''
    if (v.keyword === 'const' && unions.has(at)) continue
    const leaf = v.params?.missingProperty ?? v.params?.additionalProperty
    const path = `/${context ?? 'body'}${at}${leaf === undefined ? '' : `/${leaf}`}`
    const values =
      v.keyword === 'enum' ? v.params?.allowedValues : v.keyword === 'anyOf' ? allowed.get(at) : undefined
    const message = values ? `must be one of: ${values.map((x) => JSON.stringify(x)).join(', ')}` : v.message
    out.push({ path, message: message ?? 'is invalid' })
  }
  return out
}

/** Maps any thrown error to a problem code, status and a detail safe to show. */
export function classify(error: unknown): ProblemFields {
  if (error instanceof ApiError)
    return {
      code: error.code,
      status: error.status,
      detail: error.message,
      ...(error.errors ? { errors: error.errors } : {}),
    }
  if (error instanceof OverloadedError)
    return {
      code: 'OVERLOADED',
      status: problemStatus.OVERLOADED,
      detail: 'the database is busy; retry later',
    }
  if (isDatabaseUnreachable(error))
    return {
      code: 'UNAVAILABLE',
      status: problemStatus.UNAVAILABLE,
      detail: 'the database cannot be reached; retry later',
    }
  const e = error as Partial<FastifyError> & { message?: string }
  if (e.validation) {
    const errors = fieldErrors(e.validation as AjvError[], e.validationContext)
    const detail = errors.map((f) => `${f.path.slice(1)} ${f.message}`).join(', ')
    return {
      code: 'VALIDATION_FAILED',
      status: 400,
      detail: detail || (e.message ?? 'invalid input'),
      errors,
    }
  }
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'PAYLOAD_TOO_LARGE', status: 413, detail: 'request body is larger than the limit' }
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'UNSUPPORTED_MEDIA_TYPE', status: 415, detail: 'body must be application/json' }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'INVALID_JSON', status: 400, detail: 'body is not valid JSON' }
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        code: 'INVALID_JSON',
        status: 400,
        detail: 'body is empty but content-type is application/json',
      }
  }
  if (error instanceof SyntaxError && e.statusCode === 400) {
    return { code: 'INVALID_JSON', status: 400, detail: `body is not valid JSON: ${e.message}` }
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500
  if (status >= 400 && status < 500) {
    return { code: statusCodes[status] ?? 'VALIDATION_FAILED', status, detail: e.message ?? 'bad request' }
  }
  return { code: 'INTERNAL', status: problemStatus.INTERNAL, detail: 'internal error' }
}

/**
 * Sends `problem` as RFC 9457 `application/problem+json`. A 401 carries the RFC 6750 challenge
 * `WWW-Authenticate: Bearer` unless the auth hook already set a more precise one.
 */
export function sendProblem(reply: FastifyReply, request: FastifyRequest, problem: ProblemFields) {
  if (problem.status === 401 && !reply.hasHeader('www-authenticate'))
    reply.header('www-authenticate', 'Bearer')
  return reply
    .code(problem.status)
    .type('application/problem+json')
    .send({
      type: `urn:video-api:problem:${problem.code.toLowerCase()}`,
      title: problem.code.replaceAll('_', ' ').toLowerCase(),
      status: problem.status,
      code: problem.code,
      detail: problem.detail,
      instance: request.url,
      ...(problem.errors ? { errors: problem.errors } : {}),
    })
}

/**
 * Every 4xx/5xx leaves as `application/problem+json` with a stable `code`. 5xx are logged with the
 * error, except a read the database guard shed: 503 `OVERLOADED` with `Retry-After` (whole seconds,
 * rounded up), and a request that needed PostgreSQL while it cannot be reached: 503 `UNAVAILABLE`
 * with `Retry-After: 1`, logged as a dependency outage (warn, one line per 10 s). Also answers 503
 * while closing. On a route that overlaps its rate-limit decision (`request.rateLimitPermit`) the
 * answer waits for the decision: a refused request gets its 429 instead.
 */
export function registerProblemHandler(app: FastifyInstance): void {
  refuseWhileClosing(app)
  const outage = new DatabaseOutageLog()
  const answerError = (error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const problem = classify(error)
    if (error instanceof OverloadedError) {
      // Shedding is the guard working, not a failure: counted on /metrics, not logged per request.
      reply.header('retry-after', String(Math.ceil(error.retryAfterMs / 1000)))
    } else if (problem.status === problemStatus.UNAVAILABLE && isDatabaseUnreachable(error)) {
      reply.header('retry-after', String(DB_UNREACHABLE_RETRY_AFTER_S))
      outage.note(request.log, 'request', error)
    } else if (problem.status >= 500) request.log.error({ err: error }, 'request failed')
    return sendProblem(reply, request, problem)
  }
  app.setErrorHandler((error, request, reply) => {
    // a route whose rate-limit decision was still in flight: a refused request is a 429 whatever else failed
    const permit = request.rateLimitPermit
    if (permit === undefined) return answerError(error, request, reply)
    return permit.then(
      () => answerError(error, request, reply),
      (refusal: unknown) => answerError(refusal, request, reply),
    )
  })
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, request, {
      code: 'NOT_FOUND',
      status: 404,
      detail: `no route ${request.method} ${request.url.split('?')[0]}`,
    }),
  )
}
