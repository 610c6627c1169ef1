import type { Decision } from '../decision.js'
import type { RateLimitPolicy } from '../types.js'

/** In-memory sliding window counter state: the current aligned window and two counts. */
export interface SlidingWindowState {
  windowIndex: number
  previous: number
  current: number
}

/**
 * Sliding window counter, the same rule as `lua/sliding-window-n.lua` (Cloudflare, 2017):
 * estimate = previous × (remaining overlap of the trailing window) + current; admit iff
 * estimate + cost ≤ limit. Windows aligned to multiples of `windowMs`.
 */
export function decideSlidingWindow(
  state: SlidingWindowState | undefined,
  policy: RateLimitPolicy,
  cost: number,
  nowMs: number,
): { decision: Decision; next: SlidingWindowState | undefined } {
  const { limit, windowMs } = policy
  const index = Math.floor(nowMs / windowMs)
  const start = index * windowMs
  let previous = 0
  let current = 0
  if (state?.windowIndex === index) {
    previous = state.previous
    current = state.current
  } else if (state?.windowIndex === index - 1) {
    previous = state.current
  }
  const elapsed = nowMs - start
  const estimate = (previous * (windowMs - elapsed)) / windowMs + current
  const resetAt = (cur: number) => (cur > 0 ? start + 2 * windowMs : previous > 0 ? start + windowMs : nowMs)
  const left = Math.max(0, Math.floor(limit - estimate + 1e-9))
  if (cost > limit || estimate + cost > limit + 1e-9) {
    let retryAfterMs = -1
    if (cost <= limit) {
      if (current + cost <= limit && previous > 0) {
        retryAfterMs = Math.ceil(windowMs - ((limit - current - cost) * windowMs) / previous - elapsed)
      } else {
        retryAfterMs = start + windowMs - nowMs
        if (current > 0)
          retryAfterMs += Math.max(0, Math.ceil(windowMs - ((limit - cost) * windowMs) / current))
      }
      retryAfterMs = Math.max(1, retryAfterMs)
    }
    const decision = { allowed: false, remaining: left, resetAtMs: resetAt(current), retryAfterMs, nowMs }
    return { decision, next: undefined }
  }
  current += cost
  const remaining = Math.max(0, Math.floor(limit - estimate - cost + 1e-9))
  return {
    decision: { allowed: true, remaining, resetAtMs: resetAt(current), retryAfterMs: 0, nowMs },
    next: { windowIndex: index, previous, current },
  }
}
