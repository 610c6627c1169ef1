import { positiveInteger, positiveNumber } from '../validation/index.js'
import { assertFiniteScore } from './finite.js'

/**
 * ZUNIONSTORE weights for per-minute buckets: the bucket aged `a` minutes
 * (a = 0 for the current minute) gets `2^(−a / halfLifeMinutes)`, i.e.
 * exponential decay with the given half-life (Newton's law of cooling, as in
 * the "hacker news"/Reddit-style trending scores; here applied per bucket).
 * Returns `windowMinutes` weights, index = age in minutes. All are finite and in (0, 1].
 * @throws {InvalidArgumentError} when `windowMinutes` is not a positive integer or `halfLifeMinutes` is not a finite number > 0.
 */
export function bucketWeights(windowMinutes: number, halfLifeMinutes: number): number[] {
  positiveInteger('windowMinutes', windowMinutes)
  positiveNumber('halfLifeMinutes', halfLifeMinutes)
  const weights: number[] = []
  for (let age = 0; age < windowMinutes; age++) {
    weights.push(assertFiniteScore(2 ** (-age / halfLifeMinutes), 'weight'))
  }
  return weights
}

/**
 * `log(e^a + e^b)` without overflow: `max + log1p(e^(min − max))`.
 * The update rule of the log-space decayed score (one ZADD per event).
 * @throws {InvalidArgumentError} when an input is not finite.
 */
export function logAddExp(a: number, b: number): number {
  assertFiniteScore(a, 'a')
  assertFiniteScore(b, 'b')
  const hi = Math.max(a, b)
  const lo = Math.min(a, b)
  return hi + Math.log1p(Math.exp(lo - hi))
}

/**
 * Decay rate λ (per ms) for a half-life in ms: `ln 2 / halfLifeMs`.
 * @throws {InvalidArgumentError} when `halfLifeMs` is not a finite number > 0.
 */
export function decayRatePerMs(halfLifeMs: number): number {
  positiveNumber('halfLifeMs', halfLifeMs)
  return Math.LN2 / halfLifeMs
}
