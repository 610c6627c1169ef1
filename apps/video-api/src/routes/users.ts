import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import { notFound } from '../http/api_error.js'
import type { RouteDeps } from '../http/deps.js'
import { checkIdRange, errorResponses, IdParams, VideoRef } from '../http/schemas.js'
import { decodeCursor } from '../videos/cursor.js'

const ListQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' })),
    limit: Type.Optional(
      Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: 'page size, 1-100 (default 20)' }),
    ),
  },
  { additionalProperties: false },
)

const Page = Type.Object({
  items: Type.Array(VideoRef),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
})

/**
 * `GET /users/:id/videos`: newest first, cursor pagination over (created_at, id),
 * so rows inserted meanwhile never shift a page. The owner sees drafts and private videos too.
 */
export function userRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  r.get(
    '/users/:id/videos',
    { schema: { params: IdParams, querystring: ListQuery, response: { 200: Page, ...errorResponses } } },
    async (request) => {
      const authorId = checkIdRange(request.params.id, 'params/id')
      const cursor = request.query.cursor === undefined ? undefined : decodeCursor(request.query.cursor)
      if (!(await deps.users.exists(authorId))) throw notFound('user')
      return deps.videos.listByAuthor(
        authorId,
        cursor,
        request.query.limit === undefined ? 20 : Number(request.query.limit),
        {
          includeHidden: request.userId === authorId,
        },
      )
    },
  )
}
