import type { FastifyReply } from 'fastify'
import { putRateLimitHeaders, type RateLimitResult } from 'floodgate'

/**
 * Puts the decision's rate-limit fields (floodgate's `putRateLimitHeaders`, lower-case names) on
 * `reply`: the same names and values on the wire as `reply.headers(rateLimitHeaders(result))`,
 * without an object per request.
 * @throws {InvalidArgumentError} the policy name cannot be carried in the fields (`"` or `\`).
 */
export function putRateLimitFields(reply: FastifyReply, result: RateLimitResult): void {
  putRateLimitHeaders(result, (name, value) => {
    reply.header(name, value)
  })
}
