import { ApiError } from '../http/api_error.js'

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
    throw new ApiError('VALIDATION_FAILED', 'querystring/cursor is not a valid cursor')
  }
  return { createdAt: match[1]!, id: match[4]! }
}
