import { InvalidArgumentError } from '../errors/index.js'

/** Width of a ranking member: an item id zero-padded to 20 digits (the widest unsigned 64-bit id). */
export const MEMBER_WIDTH = 20

const DIGITS = /^\d{1,20}$/

/**
 * Checks that `itemId` is a non-negative integer id of at most 20 digits, as a string.
 * @throws {InvalidArgumentError} otherwise.
 */
export function assertItemId(itemId: string, field = 'itemId'): void {
  if (!DIGITS.test(itemId))
    throw new InvalidArgumentError(field, `must be a decimal integer id, got ${itemId}`)
}

/**
 * The ZSET member for an item: its id zero-padded to 20 digits. Equal-length
 * members make Redis' tie order (lexicographic on the member) equal to the
 * numeric order, so under ZREVRANGE equal scores list the higher (newer) id
 * first, never "9" above "10".
 * @throws {InvalidArgumentError} when `itemId` is not a decimal id.
 */
export function toMember(itemId: string | number | bigint): string {
  const id = String(itemId)
  assertItemId(id)
  return id.padStart(MEMBER_WIDTH, '0')
}

/** Inverse of {@link toMember}: strips the zero padding (`"0…042"` → `"42"`). */
export function fromMember(member: string): string {
  const stripped = member.replace(/^0+/, '')
  return stripped === '' ? '0' : stripped
}

/**
 * Rank order: higher score first; equal scores, higher (newer) id first.
 * Works on padded members or on plain ids (compared numerically by length, then digits).
 */
export function compareRanked(a: { score: number; id: string }, b: { score: number; id: string }): number {
  if (a.score !== b.score) return b.score - a.score
  if (a.id.length !== b.id.length) return b.id.length - a.id.length
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0
}
