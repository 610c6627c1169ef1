import { finiteNumber } from '../validation/index.js'

/**
 * Guards every score or weight before it is sent to Redis: NaN and ±Infinity
 * never reach a ZSET (Redis would store `inf`, or reject NaN mid-pipeline).
 * @throws {InvalidArgumentError} when `value` is not a finite number.
 */
export function assertFiniteScore(value: number, field = 'score'): number {
  return finiteNumber(field, value)
}

/**
 * Parses a score Redis returned (`"12"`, `"1.5e3"`, `"inf"`).
 * @throws {InvalidArgumentError} when it is not finite (a corrupt or foreign key).
 */
export function parseScore(raw: string, field = 'score'): number {
  return assertFiniteScore(Number(raw), field)
}
