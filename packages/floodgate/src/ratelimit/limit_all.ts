import { InvalidArgumentError } from '../errors/index.js'
import { positiveInteger } from '../validation/index.js'
import type { RedisRateLimiter } from './redis_rate_limiter.js'
import type { RateLimitResult } from './types.js'

/** One policy of a {@link limitAll} check: a limiter and the key it counts (user id, IP…). */
export interface PolicyCheck {
  limiter: RedisRateLimiter
  key: string
}

/** The answer of {@link limitAll}. */
export interface LimitAllResult {
  /** `true` only when every policy admitted. */
  readonly allowed: boolean
  /** The answers obtained, the refusing one last; policies never asked (after a refusal) are absent. */
  readonly results: readonly RateLimitResult[]
  /** The first policy that refused (its `retryAfterMs` says when to come back), if any. */
  readonly blockedBy?: RateLimitResult
}

/**
 * Checks several policies for one request, all or nothing (rate-limiter-flexible #280: "per
 * second and per day, consume from both or neither"). Two phases:
 * 1. peek every policy (read-only scripts, in parallel): if one has less than `cost` left, refuse
 *    with that policy's answer and consume nothing anywhere;
 * 2. consume from each, scarcest first (least remaining at the peek), so racers for the last
 *    units are refused by the binding policy before they touch the others; a policy that
 *    refuses here (another request took the last units between the phases) stops the rest.
 * The race in 2 errs on the strict side: the request is refused, and the units already taken
 * from earlier policies stay taken (no refund), so no policy ever admits past its limit. Keys
 * may live in different slots (no multi-key script), so this works on a cluster.
 * A store failure in phase 1 skips to phase 2, where each limiter's fallback answers.
 * @throws {InvalidArgumentError} `checks` empty, or `cost` not an integer ≥ 1.
 */
export async function limitAll(
  checks: readonly PolicyCheck[],
  options: { cost?: number } = {},
): Promise<LimitAllResult> {
  if (checks.length === 0) throw new InvalidArgumentError('checks', 'must name at least one policy')
  const cost = positiveInteger('cost', options.cost ?? 1)
  const peeks = await Promise.all(checks.map(({ limiter, key }) => limiter.peek(key).catch(() => undefined)))
  const short = peeks.findIndex((peek) => peek !== undefined && peek.remaining < cost)
  if (short >= 0) {
    const { limiter, key } = checks[short] as PolicyCheck
    // the refusing policy answers (consumes nothing: a rejected request never does)
    const refusal = await limiter.limit(key, { cost })
    if (!refusal.allowed) return { allowed: false, results: [refusal], blockedBy: refusal }
    return consumeFrom(checks, peeks, cost, [refusal], short)
  }
  return consumeFrom(checks, peeks, cost, [], -1)
}

/** Consumes from each check but `doneIndex`, scarcest (least remaining at the peek) first. */
async function consumeFrom(
  checks: readonly PolicyCheck[],
  peeks: readonly ({ remaining: number } | undefined)[],
  cost: number,
  done: RateLimitResult[],
  doneIndex: number,
): Promise<LimitAllResult> {
  const results = [...done]
  const order = checks
    .map((check, i) => ({ check, i, left: peeks[i]?.remaining ?? Number.POSITIVE_INFINITY }))
    .filter(({ i }) => i !== doneIndex)
    .sort((a, b) => a.left - b.left)
  for (const { check } of order) {
    const result = await check.limiter.limit(check.key, { cost })
    results.push(result)
    if (!result.allowed) return { allowed: false, results, blockedBy: result }
  }
  return { allowed: true, results }
}
