import { generateKeyPairSync } from 'node:crypto'
import { createSigner } from 'fast-jwt'
import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readInstallationId } from '../src/auth/installation.js'
import { createTestApp, createVideo, registerUser, TEST_JWT_SECRET, type TestApp } from './support/app.js'
import { snapshot } from './support/database.js'

let t: TestApp
const ctx = {
  alice: {} as Record<string, string>,
  bob: {} as Record<string, string>,
  video: '',
  priv: '',
  token: '',
  /** This database's installation id: the `aud` every valid token carries. */
  aud: '',
}

beforeAll(async () => {
  t = await createTestApp('badinput')
  ctx.aud = await readInstallationId(t.database.db)
  const alice = await registerUser(t.app, 'alice_b', 'alice-password')
  const bob = await registerUser(t.app, 'bob_b')
  ctx.alice = alice.auth
  ctx.bob = bob.auth
  ctx.token = alice.token
  ctx.video = (await createVideo(t.app, alice.auth)).id
  ctx.priv = (await createVideo(t.app, alice.auth, { visibility: 'private' })).id
})
afterAll(() => t.close())

const good = () => ({ title: 'ok', coverUrl: 'https://c.example/a.jpg', playUrl: 'https://v.example/a.mp4' })
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

interface Case {
  name: string
  request: () => InjectOptions
  status: number
  code: string
  /** Substring the problem detail must contain (what was wrong). */
  detail?: string
}

const post = (payload: unknown, headers = ctx.alice): InjectOptions => ({
  method: 'POST',
  url: '/videos',
  headers,
  payload: payload as object,
})
const patch = (id: string, payload: unknown, headers = ctx.alice): InjectOptions => ({
  method: 'PATCH',
  url: `/videos/${id}`,
  headers,
  payload: payload as object,
})

const cases: Case[] = [
  {
    name: 'non-numeric id',
    request: () => ({ method: 'GET', url: '/videos/abc' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'zero id',
    request: () => ({ method: 'GET', url: '/videos/0' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'negative id',
    request: () => ({ method: 'GET', url: '/videos/-1' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'fractional id',
    request: () => ({ method: 'GET', url: '/videos/1.5' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'id above 2^63-1',
    request: () => ({ method: 'GET', url: '/videos/9223372036854775808' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: '9223372036854775807',
  },
  {
    name: '20-digit id',
    request: () => ({ method: 'GET', url: '/videos/12345678901234567890' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'malformed %-escape in the path',
    request: () => ({ method: 'GET', url: '/videos/%zz' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'not a valid url',
  },
  {
    name: 'path parameter over 100 characters',
    request: () => ({ method: 'GET', url: `/videos/${'1'.repeat(200)}` }),
    status: 414,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'id with leading zero',
    request: () => ({ method: 'GET', url: '/videos/01' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'id in hex',
    request: () => ({ method: 'GET', url: '/videos/0x10' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'id in exponent form',
    request: () => ({ method: 'GET', url: '/videos/1e3' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'id in Arabic-Indic digits',
    request: () => ({ method: 'GET', url: `/videos/${encodeURIComponent('١٢')}` }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'params/id',
  },
  {
    name: 'bad id on DELETE',
    request: () => ({ method: 'DELETE', url: '/videos/0', headers: ctx.alice }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
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
  {
    name: 'empty title',
    request: () => post({ ...good(), title: '' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/title',
  },
  {
    name: 'blank title',
    request: () => post({ ...good(), title: '   ' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/title',
  },
  {
    name: 'title of 101 chars',
    request: () => post({ ...good(), title: 'x'.repeat(101) }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/title',
  },
  {
    name: 'description of 5001 chars',
    request: () => post({ ...good(), description: 'd'.repeat(5001) }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/description',
  },
  {
    name: 'title with a NUL byte',
    request: () => post({ ...good(), title: 'a\u0000b' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/title',
  },
  {
    name: 'title of only NUL and whitespace',
    request: () => post({ ...good(), title: '\u0000 \u00a0\u3000' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/title',
  },
  {
    name: 'description with a NUL byte',
    request: () => post({ ...good(), description: 'ok\u0000' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/description',
  },
  {
    name: 'PATCH title with a NUL byte',
    request: () => patch(ctx.video, { title: '\u0000' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/title',
  },
  {
    name: 'title with a lone surrogate (would be stored as U+FFFD)',
    request: () => ({
      method: 'POST',
      url: '/videos',
      headers: { ...ctx.alice, 'content-type': 'application/json' },
      payload:
        '{"title":"a\\ud800b","coverUrl":"https://c.example/a.jpg","playUrl":"https://v.example/a.mp4"}',
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/title',
  },
  {
    name: 'cover URL of 3000 chars',
    request: () => post({ ...good(), coverUrl: `http://c.example/${'a'.repeat(2983)}` }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/coverUrl',
  },
  {
    name: "cover URL 'http://' alone",
    request: () => post({ ...good(), coverUrl: 'http://' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/coverUrl',
  },
  {
    name: 'ftp cover URL',
    request: () => post({ ...good(), coverUrl: 'ftp://c.example/a.jpg' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/coverUrl',
  },
  {
    name: 'cover URL not a URL',
    request: () => post({ ...good(), coverUrl: 'not a url' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/coverUrl',
  },
  {
    name: 'javascript: play URL',
    request: () => post({ ...good(), playUrl: 'javascript:alert(1)' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/playUrl',
  },
  {
    name: 'play URL of 2049 chars',
    request: () => post({ ...good(), playUrl: `https://v.example/${'a'.repeat(2031)}` }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/playUrl',
  },
  {
    name: 'unknown body field',
    request: () => post({ ...good(), likeCount: 5 }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'additional properties',
  },
  {
    name: 'title of wrong type',
    request: () => post({ ...good(), title: 42 }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/title',
  },
  {
    name: 'unknown visibility',
    request: () => post({ ...good(), visibility: 'secret' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/visibility',
  },
  {
    name: 'missing playUrl',
    request: () => post({ title: 'a', coverUrl: 'https://c.example/a.jpg' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'playUrl',
  },
  { name: 'array body', request: () => post([good()]), status: 400, code: 'VALIDATION_FAILED' },
  {
    name: 'malformed JSON',
    request: () => ({
      method: 'POST',
      url: '/videos',
      headers: { ...ctx.alice, 'content-type': 'application/json' },
      payload: '{"title": "x",',
    }),
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    name: 'empty JSON body',
    request: () => ({
      method: 'POST',
      url: '/videos',
      headers: { ...ctx.alice, 'content-type': 'application/json' },
      payload: '',
    }),
    status: 400,
    code: 'INVALID_JSON',
  },
  {
    name: 'oversized body',
    request: () => post({ ...good(), description: 'd'.repeat(70_000) }),
    status: 413,
    code: 'PAYLOAD_TOO_LARGE',
  },
  {
    name: 'text/plain body',
    request: () => ({
      method: 'POST',
      url: '/videos',
      headers: { ...ctx.alice, 'content-type': 'text/plain' },
      payload: 'hello',
    }),
    status: 415,
    code: 'UNSUPPORTED_MEDIA_TYPE',
  },
  {
    name: "PATCH another user's video",
    request: () => patch(ctx.video, { title: 'mine now' }, ctx.bob),
    status: 403,
    code: 'FORBIDDEN',
  },
  {
    name: "DELETE another user's video",
    request: () => ({ method: 'DELETE', url: `/videos/${ctx.video}`, headers: ctx.bob }),
    status: 403,
    code: 'FORBIDDEN',
  },
  {
    name: "PATCH another user's private video",
    request: () => patch(ctx.priv, { title: 'x' }, ctx.bob),
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'PATCH without token',
    request: () => patch(ctx.video, { title: 'x' }, {}),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  {
    name: 'PATCH with empty body',
    request: () => patch(ctx.video, {}),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'PATCH with unknown field',
    request: () => patch(ctx.video, { title: 'ok', authorId: '2' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'PATCH with title of 101 chars',
    request: () => patch(ctx.video, { title: 'y'.repeat(101) }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'PATCH a missing video',
    request: () => patch('999999999', { title: 'x' }),
    status: 404,
    code: 'NOT_FOUND',
  },
  {
    name: 'list: non-numeric user id',
    request: () => ({ method: 'GET', url: '/users/abc/videos' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'list: limit 0',
    request: () => ({ method: 'GET', url: '/users/1/videos?limit=0' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'querystring/limit',
  },
  {
    name: 'list: limit 101',
    request: () => ({ method: 'GET', url: '/users/1/videos?limit=101' }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'querystring/limit',
  },
  {
    name: 'list: limit abc',
    request: () => ({ method: 'GET', url: '/users/1/videos?limit=abc' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'list: forged cursor',
    request: () => ({
      method: 'GET',
      url: `/users/1/videos?cursor=${Buffer.from('yesterday|1').toString('base64url')}`,
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'cursor',
  },
  ...(
    [
      ['February 31st', '2024-02-31T00:00:00.000000Z|5'],
      ['year 0000', '0000-01-01T00:00:00.000000Z|5'],
      ['offset +19:00', '2024-01-01T00:00:00+19:00|5'],
      ['SQL in the id', "2024-01-01T00:00:00.000000Z|1' OR 1=1 --"],
      ['id above 2^63-1', '2024-01-01T00:00:00.000000Z|9223372036854775808'],
    ] as const
  ).map(
    ([what, raw]): Case => ({
      name: `list: crafted cursor (${what})`,
      request: () => ({
        method: 'GET',
        url: `/users/1/videos?cursor=${Buffer.from(raw).toString('base64url')}`,
      }),
      status: 400,
      code: 'VALIDATION_FAILED',
      detail: 'cursor',
    }),
  ),
  {
    name: 'list: unknown query parameter',
    request: () => ({ method: 'GET', url: '/users/1/videos?sort=asc' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'feed: unknown query parameter',
    request: () => ({ method: 'GET', url: '/feed/recommend?page=2' }),
    status: 400,
    code: 'VALIDATION_FAILED',
  },
  {
    name: 'register: short password',
    request: () => ({
      method: 'POST',
      url: '/auth/register',
      payload: { username: 'newuser', password: 'short' },
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/password',
  },
  {
    name: 'register: username with spaces',
    request: () => ({
      method: 'POST',
      url: '/auth/register',
      payload: { username: 'a b c', password: 'long-enough' },
    }),
    status: 400,
    code: 'VALIDATION_FAILED',
    detail: 'body/username',
  },
  {
    name: 'register: taken username',
    request: () => ({
      method: 'POST',
      url: '/auth/register',
      payload: { username: 'alice_b', password: 'long-enough' },
    }),
    status: 409,
    code: 'CONFLICT',
  },
  {
    name: 'login: wrong password',
    request: () => ({
      method: 'POST',
      url: '/auth/login',
      payload: { username: 'alice_b', password: 'not-her-password' },
    }),
    status: 401,
    code: 'UNAUTHORIZED',
  },
  { name: 'unknown route', request: () => ({ method: 'GET', url: '/nope' }), status: 404, code: 'NOT_FOUND' },
]

describe('bad input is refused with a 4xx problem and no write', () => {
  it('has at least 30 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30)
  })

  it.each(cases)('$name → $status $code', async (c) => {
    const before = await snapshot(t.database.db)
    const res = await t.app.inject(c.request())
    expect(res.statusCode, res.body).toBe(c.status)
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
    const problem = res.json<{ code: string; status: number; detail: string }>()
    expect(problem.code).toBe(c.code)
    expect(problem.status).toBe(c.status)
    if (c.detail) expect(problem.detail).toContain(c.detail)
    expect(await snapshot(t.database.db)).toEqual(before)
  })
})

describe('good input near the refused edges', () => {
  it('accepts a title of 100 emoji (surrogate pairs) and returns it unchanged', async () => {
    const title = '😀'.repeat(100)
    const res = await t.app.inject(post({ ...good(), title }))
    expect(res.statusCode, res.body).toBe(201)
    expect(res.json<{ title: string }>().title).toBe(title)
  })
})
