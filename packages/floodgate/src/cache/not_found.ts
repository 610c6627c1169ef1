/**
 * The "not found" marker a loader returns for an entity that does not exist.
 * It is a unique symbol, so no value your loader can produce is mistaken for it,
 * and it is stored in Redis as an envelope flag (not as a codec output), so no
 * codec output can equal the negative-cache sentinel either.
 */
export const NOT_FOUND: unique symbol = Symbol.for('floodgate.cache.notFound')

/** Type of {@link NOT_FOUND}. */
export type NotFound = typeof NOT_FOUND

/** Returns {@link NOT_FOUND}; `return notFound()` reads well in a loader. */
export function notFound(): NotFound {
  return NOT_FOUND
}

/** True when `value` is the {@link NOT_FOUND} marker. */
export function isNotFound(value: unknown): value is NotFound {
  return value === NOT_FOUND
}
