import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { type RankedItem, Singleflight, StoreUnavailableError } from 'floodgate'
import { sql } from 'kysely'
import { Type } from 'typebox'
import type { VideoRow } from '../db/types.js'
import { ApiError } from '../http/api_error.js'
import { errorResponses, VideoRef } from '../http/schemas.js'
import { toVideo } from '../videos/model.js'

const HotQuery = Type.Object(
  {
    metric: Type.Optional(
      Type.Union([Type.Literal('likes'), Type.Literal('plays')], { description: 'default likes' }),
    ),
    window: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('1h'), Type.Literal('24h')], {
        description: 'all-time, or trending (time-decayed) over the last hour / day; default all',
      }),
    ),
    limit: Type.Optional(Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: '1-100, default 20' })),
  },
  { additionalProperties: false },
)

const Hot = Type.Object({
  metric: Type.String(),
  window: Type.String(),
  items: Type.Array(
    Type.Object({
      rank: Type.Integer(),
      score: Type.Number({ description: 'count (all) or time-decayed count (windows)' }),
      video: VideoRef,
    }),
  ),
  stale: Type.Boolean({
    description: 'true: Redis was unavailable; all-time order from the PostgreSQL columns',
  }),
})

const columns = sql`id, author_id, title, description, cover_url, play_url, visibility, status,
  like_count, favorite_count, play_count, created_at, updated_at, deleted_at`

/**
 * `GET /rankings/hot?metric=likes|plays&window=all|1h|24h&limit=N`: the ranking
 * from Redis (over-fetched to make up for skipped videos), joined with the
 * database in ONE `WHERE id IN (…)` query (shared by concurrent requests for the same ids),
 * kept in rank order, skipping deleted, private and draft videos. Redis down: all-time falls back to the
 * count columns (`stale: true`); trending windows answer 503.
 */
export function rankingRoutes(app: FastifyInstance): void {
  // a burst of one ranking's readers gets the same ids: they share one SELECT, so the burst does
  // not queue dozens of identical statements on the database guard (which sheds past its queue)
  const hydrations = new Singleflight<VideoRow[]>()
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get(
      '/rankings/hot',
      { schema: { querystring: HotQuery, response: { 200: Hot, ...errorResponses } } },
      async (request) => {
        const metric = request.query.metric ?? 'likes'
        const window = request.query.window ?? 'all'
        const limit = request.query.limit === undefined ? 20 : Number(request.query.limit)
        let ranked: RankedItem[]
        try {
          ranked = await app.counters.rankings.top({
            metric,
            window,
            limit: Math.min(app.counters.rankings.topK, limit * 2 + 10),
          })
        } catch (error) {
          if (!(error instanceof StoreUnavailableError)) throw error
          if (window !== 'all')
            throw new ApiError('UNAVAILABLE', 'trending rankings need Redis', { cause: error })
          return { metric, window, items: await fromColumns(app, metric, limit), stale: true }
        }
        if (ranked.length === 0) return { metric, window, items: [], stale: false }
        const ids = ranked.map((r) => r.itemId)
        const rows = await hydrations.run(ids.join(','), async () => {
          const { rows } = await app.dbGuard.run(() =>
            sql<VideoRow>`
        SELECT ${columns} FROM videos
        WHERE id IN (${sql.join(ids.map((id) => sql`${id}::bigint`))})
          AND deleted_at IS NULL AND status = 'published' AND visibility = 'public'`.execute(app.db),
          )
          return rows
        })
        const byId = new Map(rows.map((row) => [String(row.id), row]))
        const items = []
        for (const r of ranked) {
          const row = byId.get(r.itemId)
          if (!row) continue
          items.push({ rank: items.length + 1, score: r.score, video: toVideo(row) })
          if (items.length === limit) break
        }
        return { metric, window, items, stale: false }
      },
    )
}

/** All-time order from the count columns (Redis unavailable): newer video first on ties. */
async function fromColumns(app: FastifyInstance, metric: 'likes' | 'plays', limit: number) {
  const column = metric === 'likes' ? sql`like_count` : sql`play_count`
  const { rows } = await app.dbGuard.run(() =>
    sql<VideoRow>`
    SELECT ${columns} FROM videos
    WHERE deleted_at IS NULL AND status = 'published' AND visibility = 'public' AND ${column} > 0
    ORDER BY ${column} DESC, id DESC LIMIT ${limit}`.execute(app.db),
  )
  return rows.map((row, i) => ({
    rank: i + 1,
    score: Number(row[metric === 'likes' ? 'like_count' : 'play_count']),
    video: toVideo(row),
  }))
}
