import { InvalidArgumentError } from '../errors/index.js'
import type { RateLimitResult } from './types.js'

/** Options of {@link rateLimitHeaders}. */
export interface RateLimitHeaderOptions {
  /**
   * Policy name in the IETF fields (a Structured Field string).
   * @default result.policy.name
   */
  name?: string
}

/**
 * HTTP response fields for one decision, per draft-ietf-httpapi-ratelimit-headers-11
 * (RateLimit-Policy and RateLimit are Structured Field lists; all values integer seconds):
 *
 * - `RateLimit-Policy: "<name>";q=<limit>;w=<window s>` (w = ceil(windowMs / 1000), ≥ 1);
 * - `RateLimit: "<name>";r=<remaining>;t=<s>`, t = the draft's effective window: the seconds
 *   within which the client can use no more than `r`. It never exceeds w:
 *   - allowed: until the quota is fully restored or the current window ends, whichever comes
 *     first. The current window is the aligned one on the deciding clock for `fixedWindow` and
 *     `slidingWindow` (whose full restore can be up to 2 windows away), `windowMs` from now
 *     otherwise (a token bucket with `burst` above `limit` refills for longer than a window);
 *   - rejected: until this request would fit (the full restore when it can never fit), at most
 *     w, at least 1;
 * - `X-RateLimit-Limit`, `X-RateLimit-Remaining`, and `X-RateLimit-Reset`: the moment `t` counts
 *   down to (nowMs + the same duration), in Unix epoch seconds (ceil), on the deciding clock;
 * - when rejected, `Retry-After: <s>`: the whole wait, an integer number of seconds ≥ t
 *   (RFC 9110 §10.2.3; the draft: never earlier than the end of the effective window).
 *
 * Not sent: `qu` (the draft's default, "requests", is what a cost of 1 counts) and `pk` (the
 * limiter key is often a user id or an address; the draft warns against partition keys
 * carrying sensitive information).
 * Durations are computed from the result's own `nowMs`, so the app server's clock never enters.
 * @throws {InvalidArgumentError} `name` containing `"` or `\`.
 */
export function rateLimitHeaders(
  result: RateLimitResult,
  options: RateLimitHeaderOptions = {},
): Record<string, string> {
  const name = options.name ?? result.policy.name
  if (/["\\]/.test(name))
    throw new InvalidArgumentError('name', 'must not contain a double quote or backslash')
  const windowS = Math.max(1, Math.ceil(result.policy.windowMs / 1000))
  const untilRestoredMs = Math.max(0, result.resetAtMs - result.nowMs)
  const waitMs = result.retryAfterMs > 0 ? result.retryAfterMs : untilRestoredMs
  const effectiveMs = result.allowed
    ? Math.min(untilRestoredMs, windowLeftMs(result))
    : Math.min(waitMs, result.policy.windowMs)
  let t = Math.ceil(effectiveMs / 1000)
  if (!result.allowed) t = Math.max(1, t)
  const headers: Record<string, string> = {
    'RateLimit-Policy': `"${name}";q=${result.limit};w=${windowS}`,
    RateLimit: `"${name}";r=${result.remaining};t=${t}`,
    'X-RateLimit-Limit': String(result.limit),
    'X-RateLimit-Remaining': String(result.remaining),
    'X-RateLimit-Reset': String(Math.ceil((result.nowMs + effectiveMs) / 1000)),
  }
  if (!result.allowed) headers['Retry-After'] = String(Math.max(t, Math.ceil(waitMs / 1000)))
  return headers
}

/** ms until the current window ends: the aligned window for the window counters, a full window otherwise. */
function windowLeftMs({ policy, nowMs }: RateLimitResult): number {
  const aligned = policy.algorithm === 'fixedWindow' || policy.algorithm === 'slidingWindow'
  return aligned ? policy.windowMs - (nowMs % policy.windowMs) : policy.windowMs
}
