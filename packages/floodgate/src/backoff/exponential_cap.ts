/**
 * The exponential part both jitter policies share: min(maxMs, baseMs · 2^attempt) ms, `attempt`
 * 0-based (clamped to [0, 30] so the power stays finite).
 */
export function exponentialCapMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempt, 0), 30))
}
