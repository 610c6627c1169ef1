import { generateKeyPairSync } from 'node:crypto'
import { createSigner } from 'fast-jwt'
import { TEST_JWT_SECRET } from '../support/app.js'
import { type Case, ctx, good, post } from './refused.js'

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const sign = (options: Record<string, unknown>) =>
  createSigner({ key: TEST_JWT_SECRET, algorithm: 'HS256', iss: 'video-api', ...options })({ sub: '1' })
const signSub = (sub: string, options: Record<string, unknown> = {}) =>
  createSigner({
    key: TEST_JWT_SECRET,
    algorithm: 'HS256',
    iss: 'video-api',
    aud: ctx.aud,
    expiresIn: 60_000,
    ...options,
  })({
    sub,
  })
const rsaKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
  type: 'pkcs8',
  format: 'pem',
})
const tamper = (token: string) => {
  const [h, p, s] = token.split('.')
  const payload = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>
  return [h, Buffer.from(JSON.stringify({ ...payload, sub: '2' })).toString('base64url'), s].join('.')
}

/** Bearer tokens refused on POST /videos: missing, malformed, forged, of the wrong algorithm, issuer, audience or time. */
export const tokenCases: Case[] = [
  { name: 'create without token', request: () => post(good(), {}), status: 401, code: 'UNAUTHORIZED' },
  { name: 'malformed token', request: () => post(good(), bearer('abc')), status: 401, code: 'UNAUTHORIZED' },
  {
    name: 'non-bearer scheme',
    request: () => post(good(), { authorization: 'Basic YTpi' }),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'expired token',
    request: () => post(good(), bearer(sign({ clockTimestamp: Date.now() - 3_600_000, expiresIn: 1000 }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'tampered token',
    request: () => post(good(), bearer(tamper(ctx.token))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'alg none token',
    request: () => post(good(), bearer(createSigner({ algorithm: 'none' })({ sub: '1', iss: 'video-api' }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'HS512 token (wrong algorithm)',
    request: () => post(good(), bearer(sign({ algorithm: 'HS512' }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'token signed with another secret',
    request: () =>
      post(good(), bearer(createSigner({ key: 'z'.repeat(48), iss: 'video-api' })({ sub: '1' }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'RS256 token (wrong algorithm)',
    request: () =>
      post(good(), bearer(createSigner({ key: rsaKey, algorithm: 'RS256', iss: 'video-api' })({ sub: '1' }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'token without exp (never expires)',
    request: () => post(good(), bearer(signSub('1', { expiresIn: undefined }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'token without iss',
    request: () => post(good(), bearer(signSub('1', { iss: undefined }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'token of another issuer',
    request: () => post(good(), bearer(signSub('1', { iss: 'someone-else' }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'token not valid before an hour from now',
    request: () => post(good(), bearer(signSub('1', { notBefore: 3_600_000, expiresIn: 7_200_000 }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'token of another database (aud)',
    request: () => post(good(), bearer(signSub('1', { aud: 'another-installation' }))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'token of an unknown user',
    request: () => post(good(), bearer(signSub('999999999'))),
    status: 401,
    code: 'UNAUTHORIZED',
    detail: 'does not exist',
  },
  {
    name: 'token whose sub is above 2^63-1',
    request: () => post(good(), bearer(signSub('9223372036854775808'))),
    status: 401,
    code: 'UNAUTHORIZED',
  },
]
