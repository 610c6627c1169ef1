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
 * decision and why `qu` and `pk` are not sent. {@link putRateLimitHeaders} gives the same fields
 * one by one, without building this object.
 * @throws {InvalidArgumentError} `name` containing `"` or `\`.
 */
export function rateLimitHeaders(
  result: RateLimitResult,
  options?: RateLimitHeaderOptions,
): Record<string, string> {
  const headers: Record<string, string> = {}
  putRateLimitHeaders(
    result,
    (name, value) => {
      headers[CANONICAL_NAMES[name]] = value
    },
    options,
  )
  return headers
}

/** The names {@link putRateLimitHeaders} passes, lower-case (as HTTP/2 requires and Node.js stores them). */
export type RateLimitHeaderName =
  | 'ratelimit-policy'
  | 'ratelimit'
  | 'x-ratelimit-limit'
  | 'x-ratelimit-remaining'
  | 'x-ratelimit-reset'
  | 'retry-after'

// the spelling of rateLimitHeaders's keys
const CANONICAL_NAMES: Readonly<Record<RateLimitHeaderName, string>> = {
  'ratelimit-policy': 'RateLimit-Policy',
  ratelimit: 'RateLimit',
  'x-ratelimit-limit': 'X-RateLimit-Limit',
  'x-ratelimit-remaining': 'X-RateLimit-Remaining',
  'x-ratelimit-reset': 'X-RateLimit-Reset',
  'retry-after': 'Retry-After',
}

/**
 * The fields of {@link rateLimitHeaders}, each passed to `put(name, value)` with its lower-case
 * name, in the same order: for a server's own header setter on a hot path (e.g.
 * `putRateLimitHeaders(result, (name, value) => reply.header(name, value))`), where building and
 * walking an object per request costs more than the fields themselves.
 * @throws {InvalidArgumentError} `name` containing `"` or `\` (before `put` is called).
 */
export function putRateLimitHeaders(
  result: RateLimitResult,
  put: (name: RateLimitHeaderName, value: string) => void,
  options?: RateLimitHeaderOptions,
): void {
  const fields = policyFields(result, options?.name ?? result.policy.name)
  const untilRestoredMs = Math.max(0, result.resetAtMs - result.nowMs)
  const waitMs = result.retryAfterMs > 0 ? result.retryAfterMs : untilRestoredMs
  const effectiveMs = result.allowed
    ? Math.min(untilRestoredMs, windowLeftMs(result))
    : Math.min(waitMs, result.policy.windowMs)
  let t = Math.ceil(effectiveMs / 1000)
  if (!result.allowed) t = Math.max(1, t)
  const remaining = String(result.remaining)
  put('ratelimit-policy', fields.policy)
  put('ratelimit', `${fields.remainingPrefix}${remaining};t=${t}`)
  put('x-ratelimit-limit', fields.limitText)
  put('x-ratelimit-remaining', remaining)
  put('x-ratelimit-reset', String(Math.ceil((result.nowMs + effectiveMs) / 1000)))
  if (!result.allowed) put('retry-after', String(Math.max(t, Math.ceil(waitMs / 1000))))
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
