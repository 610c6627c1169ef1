import { InvalidArgumentError } from '../errors/index.js'

/** Largest PostgreSQL `bigint`, the type of item and user ids. */
const BIGINT_MAX = 9223372036854775807n

/** An item (the counted entity, e.g. a video) or user id: a positive integer up to PostgreSQL's `bigint` maximum. */
export type EntityId = string | number | bigint

/**
 * Normalizes an id to its canonical decimal string (no sign, no leading zeros).
 * @throws {InvalidArgumentError} when `id` is not an integer in [1, 2^63 - 1].
 */
export function canonicalId(field: string, id: EntityId): string {
  let text: string
  if (typeof id === 'bigint') text = id.toString()
  else if (typeof id === 'number') {
    if (!Number.isSafeInteger(id)) throw new InvalidArgumentError(field, `must be a safe integer, got ${id}`)
    text = String(id)
  } else text = id
  // fewer than 19 digits is below 10^18 < 2^63-1: no BigInt on the hot path (every counts read)
  if (!/^[1-9]\d{0,18}$/.test(text) || (text.length === 19 && BigInt(text) > BIGINT_MAX)) {
    throw new InvalidArgumentError(
      field,
      `must be an integer in [1, 2^63-1], got ${JSON.stringify(String(id))}`,
    )
  }
  return text
}
