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
 * HTTP response fields for one decision, per draft-ietf-httpapi-ratelimit-headers-10
 * (RateLimit-Policy and RateLimit are Structured Field lists; all values integer seconds):
 *
 * - `RateLimit-Policy: "<name>";q=<limit>;w=<window s>` (w = ceil(windowMs / 1000));
 * - `RateLimit: "<name>";r=<remaining>;t=<s>`: when allowed, t = seconds until the quota is
 *   fully restored, ceil((resetAtMs − nowMs) / 1000); when rejected, t = seconds until this
 *   request would fit, ceil(retryAfterMs / 1000) (≥ 1), or the full-restore time when it can never fit;
 * - `X-RateLimit-Limit`, `X-RateLimit-Remaining`, and `X-RateLimit-Reset`: the moment `t` counts
 *   down to (nowMs + the same duration), in Unix epoch seconds (ceil), on the deciding clock;
 * - when rejected, `Retry-After: <s>`: an integer number of seconds ≥ t (RFC 9110 §10.2.3).
 *
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
  const untilMs =
    !result.allowed && result.retryAfterMs > 0
      ? result.retryAfterMs
      : Math.max(0, result.resetAtMs - result.nowMs)
  let t = Math.ceil(untilMs / 1000)
  if (!result.allowed) t = Math.max(1, t)
  const headers: Record<string, string> = {
    'RateLimit-Policy': `"${name}";q=${result.limit};w=${windowS}`,
    RateLimit: `"${name}";r=${result.remaining};t=${t}`,
    'X-RateLimit-Limit': String(result.limit),
    'X-RateLimit-Remaining': String(result.remaining),
    'X-RateLimit-Reset': String(Math.ceil((result.nowMs + untilMs) / 1000)),
  }
  if (!result.allowed) headers['Retry-After'] = String(t)
  return headers
}
