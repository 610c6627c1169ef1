import { InvalidArgumentError } from '../errors/index.js'

/** Returns `value` if it is an integer ≥ 1, else throws an InvalidArgumentError naming `field`. */
export function positiveInteger(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new InvalidArgumentError(field, `must be an integer >= 1, got ${String(value)}`)
  }
  return value
}

/** Returns `value` if it is a finite number in (0, 1], else throws an InvalidArgumentError naming `field`. */
export function share(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1) {
    throw new InvalidArgumentError(field, `must be a number in (0, 1], got ${String(value)}`)
  }
  return value
}

/** Returns `value` if it is a non-empty string, else throws an InvalidArgumentError naming `field`. */
export function nonEmptyString(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidArgumentError(field, 'must be a non-empty string')
  }
  return value
}
