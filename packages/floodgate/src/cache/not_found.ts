/**
 * The "not found" marker a loader returns for an entity that does not exist.
 * It is one frozen object compared by identity, so no value your loader
 * produces is mistaken for it; it is stored in Redis as an envelope flag (not
 * as a codec output), so no codec output can equal the negative sentinel either.
 * (An object type rather than a `unique symbol`, because TypeScript widens a
 * symbol returned from an `async` loader to `symbol`.)
 */
export interface NotFound {
  readonly floodgateNotFound: true
}

/** The not-found marker. */
export const NOT_FOUND: NotFound = Object.freeze({ floodgateNotFound: true as const })

/** Returns {@link NOT_FOUND}; `return notFound()` reads well in a loader. */
export function notFound(): NotFound {
  return NOT_FOUND
}

/** True when `value` is the {@link NOT_FOUND} marker. */
export function isNotFound(value: unknown): value is NotFound {
  return value === NOT_FOUND
}
