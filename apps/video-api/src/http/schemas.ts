import { Type } from 'typebox'
import { invalidField } from './api_error.js'

/** Path or body id: a positive bigint as a string of digits (≤ 2^63-1 is checked in code). */
export const IdString = Type.String({
  // maxLength too: a too-long id's 400 then names the limit, not only the pattern
  maxLength: 19,
  pattern: '^[1-9][0-9]{0,18}$',
  description: 'positive 64-bit integer id, as a string',
})

export const IdParams = Type.Object({ id: IdString }, { additionalProperties: false })

export const HttpUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  format: 'uri',
  pattern: '^https?://[^\\s]+$',
  description: 'http(s) URL, ≤ 2048 characters',
})

export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'stable machine-readable error code' }),
    detail: Type.String(),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(
        Type.Object({
          path: Type.String({ description: 'JSON pointer of the field, prefixed by the part: /body/title' }),
          message: Type.String(),
        }),
        { description: 'each failing field of a VALIDATION_FAILED answer' },
      ),
    ),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details, served as application/problem+json' },
)

export const ProblemRef = Type.Ref('Problem')

/** 4xx/5xx responses every route may give. */
export const errorResponses = {
  400: ProblemRef,
  401: ProblemRef,
  403: ProblemRef,
  404: ProblemRef,
  409: ProblemRef,
  413: ProblemRef,
  415: ProblemRef,
  500: ProblemRef,
  503: ProblemRef,
}

export const Visibility = Type.Union([Type.Literal('public'), Type.Literal('private')])
export const Status = Type.Union([Type.Literal('draft'), Type.Literal('published')])

export const Video = Type.Object(
  {
    id: Type.String(),
    authorId: Type.String(),
    title: Type.String(),
    description: Type.String(),
    coverUrl: Type.String(),
    playUrl: Type.String(),
    visibility: Visibility,
    status: Status,
    likeCount: Type.Number(),
    favoriteCount: Type.Number(),
    playCount: Type.Number(),
    liked: Type.Optional(Type.Boolean({ description: 'the caller likes it (authenticated GETs)' })),
    favorited: Type.Optional(Type.Boolean({ description: 'the caller favourited it (authenticated GETs)' })),
    countsStale: Type.Optional(
      Type.Literal(true, {
        description:
          'present when the counts were not read from Redis within COUNTS_MAX_AGE_MS (Redis unavailable): the last Redis counts or the PostgreSQL columns',
      }),
    ),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Video' },
)

export const VideoRef = Type.Ref('Video')

/** Highest bigint value; ids above it are rejected with 400. */
export const MAX_ID = 9223372036854775807n

export function idInRange(id: string): boolean {
  // a pattern-valid id of fewer than 19 digits is below 10^18 < MAX_ID: no BigInt per request
  return id.length < 19 || BigInt(id) <= MAX_ID
}

/** @throws {ApiError} `VALIDATION_FAILED` when a pattern-valid id is above 2^63-1. */
export function checkIdRange(id: string, field: string): string {
  if (!idInRange(id)) throw invalidField(field, `must be ≤ ${MAX_ID}`)
  return id
}
