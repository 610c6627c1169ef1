import { Type } from 'typebox'
import { invalidField } from '../http/api_error.js'
import { VideoRef } from '../http/schemas.js'

/** A position in a (created_at desc, id desc) list. `createdAt` keeps microseconds as an ISO-like string. */
export interface Cursor {
  createdAt: string
  id: string
}

/** Opaque base64url of `<created_at text>|<id>`. */
export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.createdAt}|${cursor.id}`, 'utf8').toString('base64url')
}

/**
 * The only shape {@link encodeCursor} is given: PostgreSQL's
 * `to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`, then `|<id>`.
 */
const CURSOR = /^((\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.(\d{6})Z)\|([1-9][0-9]{0,18})$/

/**
 * A real UTC instant in PostgreSQL's range: `Date` rolls Feb 31 over to Mar 2
 * (PostgreSQL refuses it), so the text must survive a round trip; year 0 does
 * not exist in PostgreSQL.
 */
function isRealTimestamp(text: string, year: string): boolean {
  if (year === '0000') return false
  const date = new Date(`${text.slice(0, 23)}Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 23) === text.slice(0, 23)
}

/** @throws {ApiError} `VALIDATION_FAILED` for anything that did not come from {@link encodeCursor}. */
export function decodeCursor(text: string): Cursor {
  const raw = Buffer.from(text, 'base64url').toString('utf8')
  const match = CURSOR.exec(raw)
  if (!match || !isRealTimestamp(match[1]!, match[2]!) || BigInt(match[4]!) > 9223372036854775807n) {
    throw invalidField('querystring/cursor', 'is not a valid cursor')
  }
  return { createdAt: match[1]!, id: match[4]! }
}

/** Querystring of a cursor-paginated list: `cursor` (from a previous page's `nextCursor`), `limit` 1-100. */
export const PageQuery = Type.Object(
  {
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+$' })),
    limit: Type.Optional(
      Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: 'page size, 1-100 (default 20)' }),
    ),
  },
  { additionalProperties: false },
)

/** A page of videos; `nextCursor` is `null` on the last page. */
export const VideoPageSchema = Type.Object({
  items: Type.Array(VideoRef),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
})

/** Page size when the query gives none. */
export const DEFAULT_PAGE_LIMIT = 20

/**
 * The decoded {@link PageQuery}: `limit` defaults to {@link DEFAULT_PAGE_LIMIT}.
 * @throws {ApiError} `VALIDATION_FAILED` for a cursor that did not come from {@link encodeCursor}.
 */
export function readPageQuery(query: { cursor?: string; limit?: string }): {
  cursor: Cursor | undefined
  limit: number
} {
  return {
    cursor: query.cursor === undefined ? undefined : decodeCursor(query.cursor),
    limit: query.limit === undefined ? DEFAULT_PAGE_LIMIT : Number(query.limit),
  }
}

/**
 * Cuts the rows of a keyset query run with `LIMIT limit + 1` (the extra row
 * only tells that there is a next page) to `limit` rows, and encodes the
 * cursor after the last one when there is a next page.
 */
export function cutPage<R>(
  rows: readonly R[],
  limit: number,
  cursorOf: (row: R) => Cursor,
): { rows: R[]; nextCursor: string | null } {
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return {
    rows: page,
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(cursorOf(last)) : null,
  }
}
