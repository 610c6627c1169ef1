import { exponentialCapMs } from './exponential_cap.js'

/**
 * The library's default retry backoff, "full jitter": the wait before retry `attempt` (0-based: the
 * wait after the first failure is attempt 0) is a uniform draw in [0, min(maxMs, baseMs · 2^attempt)]
 * ms. Jitter spreads the retries of clients that failed together (a Redis restart, a failover);
 * of the policies compared in the source, full jitter finishes the work with the fewest calls.
 * Source: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015.
 * @param baseMs cap of the first wait (ms), > 0.
 * @param maxMs largest cap (ms), ≥ baseMs; `Infinity` for none.
 * @param random uniform source in [0, 1). @default Math.random
 * @returns the wait in ms (not rounded).
 */
export function fullJitterDelayMs(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  return random() * exponentialCapMs(attempt, baseMs, maxMs)
}
