import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { notFound } from '../http/api_error.js'
import { checkIdRange, errorResponses, IdParams } from '../http/schemas.js'
import { PageQuery, readPageQuery, VideoPageSchema } from '../videos/cursor.js'

/**
 * `GET /users/:id/videos`: newest first, cursor pagination over (created_at, id),
 * so rows inserted meanwhile never shift a page. The owner sees drafts and private videos too.
 */
export function userRoutes(app: FastifyInstance): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  r.get(
    '/users/:id/videos',
    {
      schema: {
        params: IdParams,
        querystring: PageQuery,
        response: { 200: VideoPageSchema, ...errorResponses },
      },
    },
    async (request) => {
      const authorId = checkIdRange(request.params.id, 'params/id')
      const { cursor, limit } = readPageQuery(request.query)
      if (!(await app.dbGuard.run(() => app.users.exists(authorId)))) throw notFound('user')
      return app.videos.listByAuthor(authorId, cursor, limit, { includeHidden: request.userId === authorId })
    },
  )
}
