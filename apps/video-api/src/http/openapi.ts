import type { FastifyDynamicSwaggerOptions, SwaggerTransformObject } from '@fastify/swagger'
import { UNLIMITED_ROUTES } from '../rate_limit/quotas.js'
import { SERVICE } from '../service_info.js'

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
const rateLimited = {
  description: 'RATE_LIMITED: the quota of this client (user or IP) is used up; see the RateLimit fields',
  headers: retryAfter,
  content: problemContent,
}
const overloaded = {
  description:
    'OVERLOADED: the database guard shed the read (Retry-After), or UNAVAILABLE: Redis or the database cannot answer, or the instance is shutting down',
  headers: retryAfter,
  content: problemContent,
}

interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  responses?: Record<string, { description?: string; content?: Record<string, unknown>; headers?: unknown }>
}
type Document = { paths?: Record<string, Record<string, Operation>>; tags?: unknown[] } & Record<
  string,
  unknown
>

/**
 * Completes the document @fastify/swagger builds from the route schemas: operationId, summary and
 * tag from {@link OPERATIONS}; errors (4xx, 5xx) as `application/problem+json` (what
 * src/http/problem_handler.ts sends); 429 on every rate-limited route; 503 `OVERLOADED` on the reads
 * the database guard can shed.
 */
export function completeDocument(document: Document): Document {
  for (const [path, operations] of Object.entries(document.paths ?? {})) {
    for (const [method, operation] of Object.entries(operations)) {
      const doc = OPERATIONS[`${method.toUpperCase()} ${path}`]
      if (doc)
        Object.assign(operation, { operationId: doc.operationId, summary: doc.summary, tags: [doc.tag] })
      const responses = operation.responses ?? {}
      for (const [status, response] of Object.entries(responses)) {
        const json = response.content?.['application/json'] as { schema?: { $ref?: string } } | undefined
        if (Number(status) >= 400 && json?.schema?.$ref === PROBLEM_REF)
          response.content = { [PROBLEM]: json }
      }
      if (!UNLIMITED_ROUTES.has(path)) responses['429'] = rateLimited
      if (doc?.shed) responses['503'] = overloaded
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
