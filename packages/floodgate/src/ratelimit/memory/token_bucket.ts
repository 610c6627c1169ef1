import type { Decision } from '../decision.js'
import type { RateLimitPolicy } from '../types.js'

/** In-memory token bucket state: tokens (fractional) at `tsMs`. */
export interface TokenBucketState {
  tokens: number
  tsMs: number
}

/**
 * Token bucket, the same rule as `lua/token-bucket-n.lua`: capacity `burst`, refill
 * `limit / windowMs` tokens per ms; a request takes `cost` tokens or nothing.
 * Mutates `state` only when admitting; returns the state to store (undefined = unchanged).
 */
export function decideTokenBucket(
  state: TokenBucketState | undefined,
  policy: RateLimitPolicy,
  cost: number,
  nowMs: number,
): { decision: Decision; next: TokenBucketState | undefined } {
  const rate = policy.limit / policy.windowMs
  let tokens = policy.burst
  let ts = nowMs
  if (state) {
    tokens =
      nowMs > state.tsMs ? Math.min(policy.burst, state.tokens + (nowMs - state.tsMs) * rate) : state.tokens
    ts = Math.max(state.tsMs, nowMs)
  }
  const fullIn = (level: number) => Math.ceil((policy.burst - level) / rate)
  if (cost > policy.burst || tokens < cost) {
    const retryAfterMs = cost > policy.burst ? -1 : Math.max(1, Math.ceil((cost - tokens) / rate))
    return {
      decision: {
        allowed: false,
        remaining: Math.floor(tokens + 1e-9),
        resetAtMs: nowMs + fullIn(tokens),
        retryAfterMs,
        nowMs,
      },
      next: undefined,
    }
  }
  tokens -= cost
  return {
    decision: {
      allowed: true,
      remaining: Math.floor(tokens + 1e-9),
      resetAtMs: nowMs + fullIn(tokens),
      retryAfterMs: 0,
      nowMs,
    },
    next: { tokens, tsMs: ts },
  }
}
