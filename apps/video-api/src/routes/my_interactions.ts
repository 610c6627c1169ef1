import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { VideoRow } from '../db/types.js'
import { requireUser } from '../http/auth.js'
import { errorResponses } from '../http/schemas.js'
import { cutPage, PageQuery, readPageQuery, VideoPageSchema } from '../videos/cursor.js'
import { toVideo } from '../videos/model.js'

type Row = VideoRow & { marked_at_text: string }

/**
 * `GET /me/likes`, `GET /me/favorites`: the caller's liked / favourited videos,
 * most recent first, cursor pagination over (created_at, video_id) of the detail
 * rows (PostgreSQL, the truth: a like shows up here once the flush applied it,
 * typically within a second). Deleted videos, and others' private or draft ones, are skipped.
 */
export function myInteractionRoutes(app: FastifyInstance): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  for (const [path, table] of [
    ['/me/likes', 'video_likes'],
    ['/me/favorites', 'video_favorites'],
  ] as const) {
    r.get(
      path,
      {
        schema: {
          security: [{ bearerAuth: [] }],
          querystring: PageQuery,
          response: { 200: VideoPageSchema, ...errorResponses },
        },
      },
      async (request) => {
        const userId = requireUser(request)
        const { cursor, limit } = readPageQuery(request.query)
        const after = cursor
          ? sql`AND (m.created_at, m.video_id) < (${cursor.createdAt}::timestamptz, ${cursor.id}::bigint)`
          : sql``
        const { rows } = await app.dbGuard.run(() =>
          sql<Row>`
          SELECT v.id, v.author_id, v.title, v.description, v.cover_url, v.play_url, v.visibility, v.status,
                 v.like_count, v.favorite_count, v.play_count, v.created_at, v.updated_at, v.deleted_at,
                 to_char(m.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS marked_at_text
          FROM ${sql.table(table)} m JOIN videos v ON v.id = m.video_id
          WHERE m.user_id = ${userId} AND v.deleted_at IS NULL
            AND ((v.status = 'published' AND v.visibility = 'public') OR v.author_id = ${userId})
            ${after}
          ORDER BY m.created_at DESC, m.video_id DESC
          LIMIT ${limit + 1}`.execute(app.db),
        )
        const page = cutPage(rows, limit, (row) => ({ createdAt: row.marked_at_text, id: String(row.id) }))
        return { items: page.rows.map(toVideo), nextCursor: page.nextCursor }
      },
    )
  }
}
