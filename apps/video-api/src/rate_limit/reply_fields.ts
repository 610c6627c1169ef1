import type { FastifyReply } from 'fastify'
import { type RateLimitResult, rateLimitHeaders } from 'floodgate'

// Fastify lower-cases each name it is given (reply.header): a mixed-case name becomes a new string
// per call, slow to use as a property key (~0.2 µs for the five fields). The few names
// rateLimitHeaders uses are lower-cased once per process instead.
const lowerCased = new Map<string, string>()

/**
 * Puts the decision's rate-limit fields (floodgate's `rateLimitHeaders`) on `reply`: the same
 * names and values on the wire as `reply.headers(rateLimitHeaders(result))`.
 * @throws {InvalidArgumentError} the policy name cannot be carried in the fields (`"` or `\`).
 */
export function putRateLimitFields(reply: FastifyReply, result: RateLimitResult): void {
  const fields = rateLimitHeaders(result)
  for (const name in fields) {
    let key = lowerCased.get(name)
    if (key === undefined) {
      key = name.toLowerCase()
      lowerCased.set(name, key)
    }
    reply.header(key, fields[name])
  }
}
