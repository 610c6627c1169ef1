/**
 * "Full jitter" exponential backoff: a uniform delay in [0, min(maxMs, baseMs · 2^attempt)] (ms).
 * Source: Marc Brooker, "Exponential Backoff And Jitter", AWS Architecture Blog, 2015.
 */
export function fullJitterDelayMs(attempt: number, baseMs: number, maxMs: number): number {
  const cap = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30))
  return Math.random() * cap
}
