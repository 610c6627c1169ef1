import { InvalidArgumentError } from '../errors/index.js'

// The option checks every module uses, so one kind of mistake reads the same everywhere:
// `<field>: must be an integer ≥ 1, got 0`.

/**
 * Returns `value` if it is a safe integer ≥ `min`.
 * @throws {InvalidArgumentError} naming `field` otherwise.
 */
export function integerAtLeast(field: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new InvalidArgumentError(field, `must be an integer ≥ ${min}, got ${String(value)}`)
  }
  return value
}

/**
 * Returns `value` if it is a safe integer ≥ 1.
 * @throws {InvalidArgumentError} naming `field` otherwise.
 */
export function positiveInteger(field: string, value: unknown): number {
  return integerAtLeast(field, value, 1)
}

/**
 * Returns `value` if it is a safe integer ≥ 0.
 * @throws {InvalidArgumentError} naming `field` otherwise.
 */
export function nonNegativeInteger(field: string, value: unknown): number {
  return integerAtLeast(field, value, 0)
}

/**
 * Returns `value` if it is a safe integer in [`min`, `max`].
 * @throws {InvalidArgumentError} naming `field` otherwise.
 */
export function integerIn(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(field, `must be an integer in [${min}, ${max}], got ${String(value)}`)
  }
  return value
}

/**
 * Returns `value` if it is a finite number (not NaN, not ±Infinity).
 * @throws {InvalidArgumentError} naming `field` otherwise.
 */
export function finiteNumber(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(field, `must be a finite number, got ${String(value)}`)
  }
  return value
}

/**
 * Returns `value` if it is a finite number > 0.
 * @throws {InvalidArgumentError} naming `field` otherwise.
 */
export function positiveNumber(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new InvalidArgumentError(field, `must be a finite number > 0, got ${String(value)}`)
  }
  return value
}

/**
 * Returns `value` if it is a finite number in (0, 1].
 * @throws {InvalidArgumentError} naming `field` otherwise.
 */
export function share(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > 1) {
    throw new InvalidArgumentError(field, `must be a number in (0, 1], got ${String(value)}`)
  }
  return value
}

/**
 * Returns `value` if it is a non-empty string.
 * @throws {InvalidArgumentError} naming `field` otherwise.
 */
export function nonEmptyString(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new InvalidArgumentError(field, 'must be a non-empty string')
  }
  return value
}
