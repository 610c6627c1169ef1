import { InvalidArgumentError } from '../errors/index.js'
import type { RateLimitPolicy, RateLimitResult } from './types.js'

/** Options of {@link rateLimitHeaders}. */
export interface RateLimitHeaderOptions {
  /**
   * Policy name in the IETF fields (a Structured Field string).
   * @default result.policy.name
   */
  name?: string
}

/** The parts of the fields that depend only on the policy, its name and limit, built once. */
interface PolicyFields {
  readonly name: string
  readonly limit: number
  /** `RateLimit-Policy`: `"<name>";q=<limit>;w=<window s>`. */
  readonly policy: string
  /** `X-RateLimit-Limit`. */
  readonly limitText: string
  /** `RateLimit` up to its remaining count: `"<name>";r=`. */
  readonly remainingPrefix: string
}

// one entry per policy object (policies are immutable: readonly fields); rebuilt when the name or
// the limit differs from the last call's (an insurance answer carries its own limit)
const fieldsByPolicy = new WeakMap<RateLimitPolicy, PolicyFields>()

/**
 * HTTP response fields for one decision, per draft-ietf-httpapi-ratelimit-headers-11:
 * `RateLimit-Policy: "<name>";q=<limit>;w=<window s>`, `RateLimit: "<name>";r=<remaining>;t=<s>`
 * (t = the draft's effective window, never above w), `X-RateLimit-Limit`, `X-RateLimit-Remaining`,
 * `X-RateLimit-Reset` (epoch s) and, when rejected, `Retry-After` (integer s ≥ t). Durations come
 * from the result's own `nowMs`. See README.md beside this file, "HTTP headers", for `t` per
 * decision and why `qu` and `pk` are not sent.
 * @throws {InvalidArgumentError} `name` containing `"` or `\`.
 */
export function rateLimitHeaders(
  result: RateLimitResult,
  options?: RateLimitHeaderOptions,
): Record<string, string> {
  const fields = policyFields(result, options?.name ?? result.policy.name)
  const untilRestoredMs = Math.max(0, result.resetAtMs - result.nowMs)
  const waitMs = result.retryAfterMs > 0 ? result.retryAfterMs : untilRestoredMs
  const effectiveMs = result.allowed
    ? Math.min(untilRestoredMs, windowLeftMs(result))
    : Math.min(waitMs, result.policy.windowMs)
  let t = Math.ceil(effectiveMs / 1000)
  if (!result.allowed) t = Math.max(1, t)
  const remaining = String(result.remaining)
  const headers: Record<string, string> = {
    'RateLimit-Policy': fields.policy,
    RateLimit: `${fields.remainingPrefix}${remaining};t=${t}`,
    'X-RateLimit-Limit': fields.limitText,
    'X-RateLimit-Remaining': remaining,
    'X-RateLimit-Reset': String(Math.ceil((result.nowMs + effectiveMs) / 1000)),
  }
  if (!result.allowed) headers['Retry-After'] = String(Math.max(t, Math.ceil(waitMs / 1000)))
  return headers
}

/** The policy's constant parts for `name` and the result's limit, from the cache or built (and validated) once. */
function policyFields(result: RateLimitResult, name: string): PolicyFields {
  const cached = fieldsByPolicy.get(result.policy)
  if (cached !== undefined && cached.name === name && cached.limit === result.limit) return cached
  if (name.includes('"') || name.includes('\\'))
    throw new InvalidArgumentError('name', 'must not contain a double quote or backslash')
  const windowS = Math.max(1, Math.ceil(result.policy.windowMs / 1000))
  const fields: PolicyFields = {
    name,
    limit: result.limit,
    policy: `"${name}";q=${result.limit};w=${windowS}`,
    limitText: String(result.limit),
    remainingPrefix: `"${name}";r=`,
  }
  fieldsByPolicy.set(result.policy, fields)
  return fields
}

/** ms until the current window ends: the aligned window for the window counters, a full window otherwise. */
function windowLeftMs({ policy, nowMs }: RateLimitResult): number {
  const aligned = policy.algorithm === 'fixedWindow' || policy.algorithm === 'slidingWindow'
  return aligned ? policy.windowMs - (nowMs % policy.windowMs) : policy.windowMs
}
