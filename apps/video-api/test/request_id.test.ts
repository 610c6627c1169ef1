import { Writable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SERVICE } from '../src/service_info.js'
import { createTestApp, secondInstance, type TestApp } from './support/app.js'

let t: TestApp
const lines: Record<string, unknown>[] = []
const stream = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
    done()
  },
})

beforeAll(async () => {
  t = await createTestApp('requestid', { logger: { level: 'info', stream } })
})
afterAll(() => t.close())

describe('x-request-id', () => {
  it('is accepted, echoed and logged', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/healthz',
      headers: { 'x-request-id': 'abc-123.4' },
    })
    expect(res.headers['x-request-id']).toBe('abc-123.4')
    const logged = lines.filter((l) => l.reqId === 'abc-123.4')
    // one line per request, with the request, the status and the time
    expect(logged.map((l) => l.msg)).toEqual(['request completed'])
    expect(logged[0]).toMatchObject({
      req: { method: 'GET', url: '/healthz' },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    })
  })

  it('is echoed on errors too', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'err-1' } })
    expect(res.statusCode).toBe(404)
    expect(res.headers['x-request-id']).toBe('err-1')
    const unauth = await t.app.inject({
      method: 'POST',
      url: '/videos',
      headers: { 'x-request-id': 'err-2' },
    })
    expect(unauth.statusCode).toBe(401)
    expect(unauth.headers['x-request-id']).toBe('err-2')
  })

  it('is echoed on answers the router, the body parser and the rate limiter give', async () => {
    const limited = await secondInstance(t, {
      bodyLimitBytes: 64,
      rateLimit: {
        prefix: `${t.prefix}:rl`,
        quotas: {
          user: { limit: 5, windowMs: 60_000 },
          anonymous: { limit: 50, windowMs: 60_000 },
          write: { limit: 50, windowMs: 60_000 },
          auth: { limit: 50, windowMs: 60_000 },
          routes: { 'GET /docs/json': { limit: 1, windowMs: 60_000 } },
        },
        fallback: 'failClosed',
        timeoutMs: 10_000,
      },
    })
    const json = { 'content-type': 'application/json' }
    const cases: {
      status: number
      method: 'GET' | 'POST'
      url: string
      headers?: Record<string, string>
      payload?: string
    }[] = [
      { status: 400, method: 'GET', url: '/videos/%zz' }, // frameworkErrors: before any hook
      { status: 413, method: 'POST', url: '/auth/register', headers: json, payload: 'x'.repeat(100) },
      { status: 400, method: 'POST', url: '/auth/register', headers: json, payload: '{"broken' },
      {
        status: 415,
        method: 'POST',
        url: '/auth/register',
        headers: { 'content-type': 'text/html' },
        payload: '<p>',
      },
      { status: 200, method: 'GET', url: '/docs/json' },
      { status: 429, method: 'GET', url: '/docs/json' },
    ]
    for (const [i, { status, ...request }] of cases.entries()) {
      const id = `case-${i}`
      const res = await limited.inject({ ...request, headers: { ...request.headers, 'x-request-id': id } })
      expect([res.statusCode, res.headers['x-request-id']]).toEqual([status, id])
    }
  })

  it('is generated (a UUID) when absent or unfit for a log line', async () => {
    for (const header of [undefined, 'has space', 'x'.repeat(129), 'line\u2028break']) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/healthz',
        headers: header === undefined ? {} : { 'x-request-id': header },
      })
      expect(res.headers['x-request-id']).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      )
    }
  })
})

describe('service identity', () => {
  it('puts the service name and version on every log line', async () => {
    await t.app.inject({ method: 'GET', url: '/healthz' })
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) expect(line).toMatchObject({ service: 'video-api', version: SERVICE.version })
    expect(SERVICE.version).toMatch(/^\d+\.\d+\.\d+/)
  })

  it('exports video_api_build_info on /metrics', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics' })
    const line = res.body.split('\n').find((l) => l.startsWith('video_api_build_info{'))
    expect(line).toBeDefined()
    expect(line).toContain(`service="video-api"`)
    expect(line).toContain(`version="${SERVICE.version}"`)
    expect(line).toContain(`nodejs_version="${process.version}"`)
    expect(line?.endsWith(' 1')).toBe(true)
  })
})
