import type { FastifyDynamicSwaggerOptions, SwaggerTransformObject } from '@fastify/swagger'
import { UNLIMITED_ROUTES } from '../rate_limit/quotas.js'
import { SERVICE } from '../service_info.js'
import type { ProblemCode } from './api_error.js'

/** What the OpenAPI document says of one operation, keyed `"<METHOD> <OpenAPI path>"`. */
export interface OperationDoc {
  operationId: string
  summary: string
  tag: Tag
  /** The read goes through the database guard: it may answer 503 `OVERLOADED` with `Retry-After`. */
  shed?: true
}

const TAGS = {
  auth: 'Registration and bearer tokens',
  videos: 'Videos: create, read, change, delete',
  users: 'Users and their videos',
  feed: 'Recommendations',
  interactions: 'Likes, favourites and plays',
  rankings: 'Rankings and counts',
  admin: 'Administration (users listed in ADMIN_USER_IDS)',
  ops: 'Probes (not rate limited)',
} as const
type Tag = keyof typeof TAGS

/** Every operation of the API; a route missing here is caught by test/openapi.test.ts. */
export const OPERATIONS: Readonly<Record<string, OperationDoc>> = {
  'GET /healthz': { operationId: 'getHealth', summary: 'Liveness: the process answers', tag: 'ops' },
  'GET /readyz': {
    operationId: 'getReadiness',
    summary: 'Readiness: PostgreSQL and Redis answer within 1 s',
    tag: 'ops',
  },
  'POST /auth/register': { operationId: 'register', summary: 'Create a user and get a token', tag: 'auth' },
  'POST /auth/login': { operationId: 'login', summary: 'Get a bearer token for a user', tag: 'auth' },
  'POST /videos': { operationId: 'createVideo', summary: 'Publish or draft a video', tag: 'videos' },
  'GET /videos/{id}': {
    operationId: 'getVideo',
    summary: 'A video with its counts',
    tag: 'videos',
    shed: true,
  },
  'PATCH /videos/{id}': {
    operationId: 'updateVideo',
    summary: 'Change fields of an own video',
    tag: 'videos',
  },
  'DELETE /videos/{id}': { operationId: 'deleteVideo', summary: 'Delete an own video', tag: 'videos' },
  'GET /users/{id}/videos': {
    operationId: 'listUserVideos',
    summary: "A user's videos, newest first (cursor pages)",
    tag: 'users',
    shed: true,
  },
  'GET /feed/recommend': {
    operationId: 'getRecommendedFeed',
    summary: 'Recommended videos',
    tag: 'feed',
    shed: true,
  },
  'GET /videos/{id}/stats': {
    operationId: 'getVideoStats',
    summary: 'Like, favourite and play counts of a video',
    tag: 'rankings',
    shed: true,
  },
  'GET /me/likes': {
    operationId: 'listMyLikes',
    summary: 'Videos the caller likes',
    tag: 'interactions',
    shed: true,
  },
  'GET /me/favorites': {
    operationId: 'listMyFavorites',
    summary: 'Videos the caller favourited',
    tag: 'interactions',
    shed: true,
  },
  'GET /rankings/hot': {
    operationId: 'getHotRanking',
    summary: 'All-time or trending top videos',
    tag: 'rankings',
    shed: true,
  },
  'PUT /videos/{id}/like': {
    operationId: 'likeVideo',
    summary: 'Like a video (idempotent)',
    tag: 'interactions',
  },
  'DELETE /videos/{id}/like': {
    operationId: 'unlikeVideo',
    summary: 'Take a like back (idempotent)',
    tag: 'interactions',
  },
  'PUT /videos/{id}/favorite': {
    operationId: 'favoriteVideo',
    summary: 'Favourite a video (idempotent)',
    tag: 'interactions',
  },
  'DELETE /videos/{id}/favorite': {
    operationId: 'unfavoriteVideo',
    summary: 'Take a favourite back (idempotent)',
    tag: 'interactions',
  },
  'POST /videos/{id}/play': { operationId: 'recordPlay', summary: 'Count a play', tag: 'interactions' },
  'POST /admin/rebuild/counters': {
    operationId: 'rebuildCounters',
    summary: 'Rebuild the Redis counters from PostgreSQL',
    tag: 'admin',
  },
  'GET /admin/reconcile': {
    operationId: 'reconcileCounters',
    summary: 'Compare Redis counters with PostgreSQL',
    tag: 'admin',
  },
  'POST /admin/rebuild/bloom': {
    operationId: 'rebuildBloom',
    summary: 'Rebuild the Bloom filter of video ids',
    tag: 'admin',
  },
}

const PROBLEM = 'application/problem+json'
const PROBLEM_REF = '#/components/schemas/Problem'
const problemContent = { [PROBLEM]: { schema: { $ref: PROBLEM_REF } } }
const retryAfter = {
  'Retry-After': { description: 'seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } },
}

/** One problem code an error status of an operation carries, and when. */
interface ErrorAnswer {
  code: ProblemCode
  when: string
}

/** What the operation is, for the answers the HTTP layer and the hooks give before its handler. */
interface OperationShape {
  /** A probe or /metrics: no token check, no rate limit. */
  probe: boolean
  /** POST, PUT, PATCH, DELETE: Fastify reads a body (JSON only, up to BODY_LIMIT_BYTES). */
  readsBody: boolean
  rateLimited: boolean
  shed: boolean
}

const FIELD_ERRORS = 'a parameter, query field, body field or path id is invalid (`errors` lists each)'
const MALFORMED = 'the request is malformed HTTP or its URL a malformed %-escape'

/**
 * The problem codes every status of an operation can carry, by status. Those the HTTP layer gives
 * before any route (400 malformed request, 408, 413, 415, 431, 503 while shutting down) and the
 * hooks (401 on a bad token, 429) are listed on every operation they reach; those of the handler
 * (401, 403, 404, 409 from `security` and errorResponses) where the route declares them.
 */
function errorAnswers(shape: OperationShape, declared: ReadonlySet<number>): Map<number, ErrorAnswer[]> {
  const answers = new Map<number, ErrorAnswer[]>()
  const add = (status: number, code: ProblemCode, when: string) =>
    answers.set(status, [...(answers.get(status) ?? []), { code, when }])
  add(400, 'VALIDATION_FAILED', shape.probe ? MALFORMED : `${FIELD_ERRORS}, or ${MALFORMED}`)
  if (shape.readsBody)
    add(400, 'INVALID_JSON', 'the body is not valid JSON, or empty with a JSON content type')
  if (!shape.probe)
    add(
      401,
      'UNAUTHORIZED',
      'the operation needs a bearer token, or the one sent is malformed, expired or invalid (refused even where a token is optional)',
    )
  if (declared.has(403)) add(403, 'FORBIDDEN', 'the caller may not do this (not the owner, not an admin)')
  if (declared.has(404)) add(404, 'NOT_FOUND', 'no such resource, or not one the caller may see')
  add(
    408,
    'REQUEST_TIMEOUT',
    'the request was not received within REQUEST_TIMEOUT_MS; the connection is closed',
  )
  if (declared.has(409)) add(409, 'CONFLICT', 'the state does not allow it now (taken name, running rebuild)')
  if (shape.readsBody) {
    add(413, 'PAYLOAD_TOO_LARGE', 'the body is over BODY_LIMIT_BYTES')
    add(415, 'UNSUPPORTED_MEDIA_TYPE', 'a body that is not application/json')
  }
  if (shape.rateLimited)
    add(429, 'RATE_LIMITED', 'the quota of this client (user or IP) is used up; see the RateLimit fields')
  add(431, 'HEADERS_TOO_LARGE', "request line and headers over Node's 16 KiB; the connection is closed")
  add(500, 'INTERNAL', 'an unexpected error (logged)')
  add(
    503,
    'UNAVAILABLE',
    'Redis or the database cannot answer, or the instance is shutting down (Retry-After)',
  )
  if (shape.shed) add(503, 'OVERLOADED', 'the database guard shed the read (Retry-After)')
  return answers
}

interface Response {
  description?: string
  content?: Record<string, unknown>
  headers?: unknown
}
interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  responses?: Record<string, Response>
}
type Document = { paths?: Record<string, Record<string, Operation>>; tags?: unknown[] } & Record<
  string,
  unknown
>

const READS_BODY = new Set(['post', 'put', 'patch', 'delete'])

/**
 * Completes the document @fastify/swagger builds from the route schemas: operationId, summary and
 * tag from {@link OPERATIONS}; every error status the operation can answer (see errorAnswers), as
 * `application/problem+json` (what src/http/problem_handler.ts and framework_errors.ts send), its
 * description naming its problem codes; no 413/415 on a GET (Fastify reads no body there).
 */
export function completeDocument(document: Document): Document {
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const doc = OPERATIONS[`${method.toUpperCase()} ${path}`]
      if (doc)
        Object.assign(operation, { operationId: doc.operationId, summary: doc.summary, tags: [doc.tag] })
      const responses = operation.responses ?? {}
      const shape: OperationShape = {
        probe: UNLIMITED_ROUTES.has(path),
        readsBody: READS_BODY.has(method),
        rateLimited: !UNLIMITED_ROUTES.has(path),
        shed: doc?.shed === true,
      }
      const declared = new Set(Object.keys(responses).map(Number))
      // no 413/415 on a GET: Fastify reads no body there
      for (const status of [413, 415]) if (!shape.readsBody) delete responses[status]
      for (const [status, answers] of errorAnswers(shape, declared)) {
        const json = responses[status]?.content?.['application/json'] as
          | { schema?: { $ref?: string } }
          | undefined
        responses[status] = {
          description: answers.map((a) => `${a.code}: ${a.when}`).join('; or '),
          // a body of the route's own (/readyz's "not ready") stays next to the problem
          content: {
            ...(json && json.schema?.$ref !== PROBLEM_REF ? { 'application/json': json } : {}),
            ...problemContent,
          },
          ...(status === 429 || status === 503 ? { headers: retryAfter } : {}),
        }
      }
      operation.responses = responses
    }
  }
  document.tags = Object.entries(TAGS).map(([name, description]) => ({ name, description }))
  return document
}

/** @fastify/swagger options: component schemas named by their `$id` (`Problem`, `Video`), not `def-0`. */
export function swaggerOptions(): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      info: {
        title: SERVICE.name,
        version: SERVICE.version,
        description:
          'Reference short-video service built on floodgate. Errors are RFC 9457 problem details with a stable `code`; every route but the probes carries the IETF RateLimit fields.',
      },
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) =>
        typeof json.$id === 'string' ? json.$id : `def-${i}`,
    },
    // only `openapi` is configured, so the document is always an OpenAPI (not Swagger 2) one
    transformObject: (document) =>
      ('openapiObject' in document
        ? completeDocument(document.openapiObject as Document)
        : document.swaggerObject) as ReturnType<SwaggerTransformObject>,
  }
}
