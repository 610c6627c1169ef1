/** The algorithm-level answer, before the limiter adds its policy and source. Times in ms. */
export interface Decision {
  allowed: boolean
  remaining: number
  resetAtMs: number
  retryAfterMs: number
  nowMs: number
}
