import { exponentialCapMs } from './exponential_cap.js'

/**
 * "Equal jitter" backoff: the wait before retry `attempt` (0-based, as {@link fullJitterDelayMs})
 * is d/2 plus a uniform draw in [0, d/2], with d = min(maxMs, baseMs · 2^attempt) ms. Unlike full
 * jitter it never retries at once, which suits retries of a costly job (a Bloom rebuild) over
 * cheap calls. Source: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015.
 * @param baseMs the first d (ms), > 0.
 * @param maxMs largest d (ms), ≥ baseMs; `Infinity` for none.
 * @param random uniform source in [0, 1). @default Math.random
 * @returns the wait in ms (not rounded).
 */
export function equalJitterDelayMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const cap = exponentialCapMs(attempt, baseMs, maxMs)
  return cap / 2 + random() * (cap / 2)
}
