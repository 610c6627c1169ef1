import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { Type } from 'typebox'
import { countedVideoJson, localVideoJson } from '../counters/video_json.js'
import { forbidden, notFound } from '../http/api_error.js'
import { requireUser } from '../http/auth.js'
import {
  checkIdRange,
  errorResponses,
  HttpUrl,
  IdParams,
  Status,
  VideoRef,
  Visibility,
} from '../http/schemas.js'
import { type Video, visibleTo } from '../videos/model.js'

// PostgreSQL text cannot hold U+0000 (the insert would fail with a 500), and a lone UTF-16 surrogate
// would be stored silently as U+FFFD: refuse both here (patterns run with the `u` flag, so a
// surrogate pair such as an emoji is one code point and passes).
const Title = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(?=[\\s\\S]*\\S)[^\\u0000\\uD800-\\uDFFF]*$',
  description: '1-100 characters, not only whitespace, no NUL or lone surrogate',
})
const Description = Type.String({
  maxLength: 5000,
  pattern: '^[^\\u0000\\uD800-\\uDFFF]*$',
  description: 'no NUL or lone surrogate',
})

const CreateBody = Type.Object(
  {
    title: Title,
    description: Type.Optional(Description),
    coverUrl: HttpUrl,
    playUrl: HttpUrl,
    visibility: Type.Optional(Visibility),
    status: Type.Optional(Status),
  },
  { additionalProperties: false },
)

const PatchBody = Type.Object(
  {
    title: Type.Optional(Title),
    description: Type.Optional(Description),
    coverUrl: Type.Optional(HttpUrl),
    playUrl: Type.Optional(HttpUrl),
    visibility: Type.Optional(Visibility),
    status: Type.Optional(Status),
  },
  { additionalProperties: false, minProperties: 1 },
)

const auth = [{ bearerAuth: [] }]

/** The content type Fastify gives a serialized JSON answer. */
const JSON_UTF8 = 'application/json; charset=utf-8'

/**
 * `POST /videos`, `GET /videos/:id`, `PATCH /videos/:id`, `DELETE /videos/:id`.
 * A private, draft or deleted video is a 404 for anyone but its owner (no existence leak);
 * changing someone else's visible video is a 403.
 */
export function videoRoutes(app: FastifyInstance): void {
  const r = app.withTypeProvider<TypeBoxTypeProvider>()
  const replica = app.videoCache?.replica

  r.post(
    '/videos',
    { schema: { security: auth, body: CreateBody, response: { 201: VideoRef, ...errorResponses } } },
    async (request, reply) => {
      const userId = requireUser(request)
      const video = await app.videoWriter.create(userId, request.body)
      return reply.code(201).header('location', `/videos/${video.id}`).send(video)
    },
  )

  // The answer's JSON text is written here (counters/video_json.ts): an L1 hit whose counts are
  // kept in process is answered synchronously, with no promise and no preSerialization hook.
  // The rate-limit decision, when Redis makes it, overlaps the cache's reads (overlapsRateLimit):
  // the readers query PostgreSQL, and the answer leaves, only once it admits the request.
  r.get(
    '/videos/:id',
    {
      schema: { params: IdParams, response: { 200: VideoRef, ...errorResponses } },
      config: { overlapsRateLimit: true },
    },
    (request, reply) => {
      const id = checkIdRange(request.params.id, 'params/id')
      const permit = request.rateLimitPermit
      const cached = app.videos.getCachedById?.(id)
      if (cached !== undefined) {
        if (permit === undefined) return videoText(reply, cached, request.userId)
        return permit.then(() => videoText(reply, cached, request.userId))
      }
      // the counts read goes out with the video's L2 read or load, not after it; not for an id
      // the Bloom bits call absent (a penetration costs no Redis read) nor for a viewer (flags)
      if (request.userId === undefined && replica?.localAnswer(id) === true) app.counters.live.prefetch(id)
      return app.videos
        .getById(id, permit === undefined ? undefined : { permit })
        .then((video) => videoText(reply, video ?? null, request.userId))
    },
  )

  /**
   * The 200 answer of `video` to `viewer` as JSON text, content type set; a promise only when its
   * counts need a read. @throws the 404 problem when there is no such video or `viewer` may not see it.
   */
  const videoText = (reply: FastifyReply, video: Video | null, viewer: string | undefined) => {
    if (video === null || !visibleTo(video, viewer)) throw notFound()
    const live = app.counters.live
    const text = localVideoJson(live, video, viewer)
    reply.type(JSON_UTF8)
    if (text !== undefined) return text
    return countedVideoJson(live, video, viewer, app.counters.metrics?.staleRead)
  }

  /** Loads a live video for a change by `userId`: 404 if not visible to them, 403 if visible but not theirs. */
  const owned = async (id: string, userId: string) => {
    const video = await app.videos.getById(id, { write: true })
    if (!video || !visibleTo(video, userId)) throw notFound()
    if (video.authorId !== userId) throw forbidden('only the owner may change this video')
    return video
  }

  r.patch(
    '/videos/:id',
    {
      schema: {
        security: auth,
        params: IdParams,
        body: PatchBody,
        response: { 200: VideoRef, ...errorResponses },
      },
    },
    async (request) => {
      const userId = requireUser(request)
      const id = checkIdRange(request.params.id, 'params/id')
      await owned(id, userId)
      const video = await app.videoWriter.update(id, userId, request.body)
      if (!video) throw notFound()
      return video
    },
  )

  r.delete(
    '/videos/:id',
    { schema: { security: auth, params: IdParams, response: { 204: Type.Null(), ...errorResponses } } },
    async (request, reply) => {
      const userId = requireUser(request)
      const id = checkIdRange(request.params.id, 'params/id')
      await owned(id, userId)
      if (!(await app.videoWriter.softDelete(id, userId))) throw notFound()
      return reply.code(204).send(null)
    },
  )
}
