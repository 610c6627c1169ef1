import type { LightMyRequestResponse } from 'fastify'
import { expect } from 'vitest'

/**
 * Asserts that `res` is the rate-limit plugin's 429 for the policy `name` (`RateLimit-Policy`
 * field `policyField`) at `url`: problem+json, `Retry-After` in whole seconds, nothing left.
 */
export function expectRateLimited(
  res: LightMyRequestResponse,
  name: string,
  policyField: string,
  url: string,
) {
  expect(res.statusCode).toBe(429)
  expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8')
  expect(res.headers['ratelimit-policy']).toBe(policyField)
  expect(res.headers['x-ratelimit-remaining']).toBe('0')
  expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/)
  expect(res.json()).toEqual({
    type: 'urn:video-api:problem:rate_limited',
    title: 'rate limited',
    status: 429,
    code: 'RATE_LIMITED',
    detail: `rate limit "${name}" exceeded; retry in ${res.headers['retry-after']} s`,
    instance: url,
  })
}
