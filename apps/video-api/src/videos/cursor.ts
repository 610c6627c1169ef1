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

/** @throws {ApiError} `VALIDATION_FAILED` for anything that did not come from {@link encodeCursor}. */
export function decodeCursor(text: string): Cursor {
  const raw = Buffer.from(text, 'base64url').toString('utf8')
  const match =
    /^(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}(?::?\d{2})?))\|([1-9][0-9]{0,18})$/.exec(
      raw,
    )
  if (
    !match ||
    Number.isNaN(Date.parse(match[1]!.replace(' ', 'T'))) ||
    BigInt(match[2]!) > 9223372036854775807n
  ) {
    throw new ApiError('VALIDATION_FAILED', 'querystring/cursor is not a valid cursor')
  }
  return { createdAt: match[1]!, id: match[2]! }
}
