import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { problemStatus } from '../src/http/api_error.js'
import { createTestApp, registerUser, secondInstance, type TestApp } from './support/app.js'
import { codesNamed, type OpenApiDocument } from './support/openapi_document.js'
import { exchange, type RawAnswer, RawConnection } from './support/raw_http.js'

/**
 * The OpenAPI document against what the app answers: each edge answer provoked on every operation
 * (the HTTP layer's over a real socket: Node's parser errors never reach inject()), and each must be
 * documented for that operation as a problem naming its code; then the document against the
 * problem code catalogue (src/http/api_error.ts).
 */
let t: TestApp
let port = 0
let doc: OpenApiDocument
let token = ''
const operations: { key: string; method: string; target: string; probe: boolean; readsBody: boolean }[] = []

beforeAll(async () => {
  t = await createTestApp('oasanswers', { cache: true })
  token = (await registerUser(t.app, 'oas_user')).token
  doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<OpenApiDocument>()
  for (const [path, methods] of Object.entries(doc.paths))
    for (const method of Object.keys(methods)) {
      const upper = method.toUpperCase()
      operations.push({
        key: `${upper} ${path}`,
        method: upper,
        target: path.replaceAll('{id}', '1'),
        probe: path === '/healthz' || path === '/readyz',
        readsBody: ['POST', 'PUT', 'PATCH', 'DELETE'].includes(upper),
      })
    }
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  port = (t.app.server.address() as AddressInfo).port
})
afterAll(() => t.close())

const closing = 'Host: t\r\nConnection: close\r\n'

/** The answer is a problem+json whose status and code the document lists for the operation. */
function expectDocumented(
  key: string,
  answer: RawAnswer | { status: number; headers: Record<string, unknown>; body: string },
  code: string,
) {
  const [method, path] = key.split(' ') as [string, string]
  const response = doc.paths[path]?.[method.toLowerCase()]?.responses[String(answer.status)]
  expect(String(answer.headers['content-type']), `${key} ${answer.status}`).toMatch(
    /^application\/problem\+json/,
  )
  const problem = JSON.parse(answer.body) as { status: number; code: string }
  expect([problem.status, problem.code], key).toEqual([answer.status, code])
  expect(response, `${key} documents ${answer.status}`).toBeDefined()
  expect(response?.content?.['application/problem+json']?.schema, `${key} ${answer.status}`).toEqual({
    $ref: '#/components/schemas/Problem',
  })
  expect(codesNamed(response?.description), `${key} ${answer.status} names ${code}`).toContain(code)
}

describe('every edge answer is in the document, for every operation', () => {
  it.each([
    {
      what: 'malformed HTTP',
      status: 400,
      code: 'VALIDATION_FAILED',
      headers: 'Host: t\r\nBad Header: x\r\n',
    },
    {
      what: 'headers over 16 KiB',
      status: 431,
      code: 'HEADERS_TOO_LARGE',
      headers: `${closing}X-Big: ${'b'.repeat(20_000)}\r\n`,
    },
  ])('$what → $status $code', async ({ status, code, headers }) => {
    for (const op of operations) {
      const answer = await exchange(port, `${op.method} ${op.target} HTTP/1.1\r\n${headers}\r\n`)
      expect(answer.status, op.key).toBe(status)
      expectDocumented(op.key, answer, code)
    }
  })

  it('a malformed token → 401 UNAUTHORIZED on the API; the probes answer on their own terms', async () => {
    for (const op of operations) {
      const answer = await exchange(
        port,
        `${op.method} ${op.target} HTTP/1.1\r\n${closing}Authorization: Bearer not-a-jwt\r\n\r\n`,
      )
      if (op.probe) expect(answer.status, op.key).toBe(200)
      else {
        expect(answer.status, op.key).toBe(401)
        expectDocumented(op.key, answer, 'UNAUTHORIZED')
      }
    }
  })

  it('a body too large, not JSON or broken JSON → 413, 415, 400 INVALID_JSON where a body is read', async () => {
    const auth = `Authorization: Bearer ${token}\r\n`
    for (const op of operations.filter((o) => o.readsBody)) {
      const send = (type: string, body: string) =>
        exchange(
          port,
          `${op.method} ${op.target} HTTP/1.1\r\n${closing}${auth}Content-Type: ${type}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        )
      const big = await send('application/json', `"${'x'.repeat(70_000)}"`)
      expect(big.status, op.key).toBe(413)
      expectDocumented(op.key, big, 'PAYLOAD_TOO_LARGE')
      const text = await send('text/plain', 'hello')
      expect(text.status, op.key).toBe(415)
      expectDocumented(op.key, text, 'UNSUPPORTED_MEDIA_TYPE')
      const broken = await send('application/json', '{"broken')
      expect(broken.status, op.key).toBe(400)
      expectDocumented(op.key, broken, 'INVALID_JSON')
    }
    for (const op of operations.filter((o) => !o.readsBody))
      for (const status of ['413', '415']) {
        const [method, path] = op.key.split(' ') as [string, string]
        expect(
          doc.paths[path]?.[method.toLowerCase()]?.responses[status],
          `${op.key} reads no body`,
        ).toBeUndefined()
      }
  })

  it('a bad %-escape, or an id of 100, 101 or 10,000 characters → the same 400 naming the parameter and its limit', async () => {
    const withId = operations.filter((o) => o.key.includes('{id}'))
    expect(withId).toHaveLength(10)
    for (const op of withId) {
      const auth = `Authorization: Bearer ${token}\r\n`
      const badEscape = await exchange(
        port,
        `${op.method} ${op.target.replace('/1', '/%zz')} HTTP/1.1\r\n${closing}${auth}\r\n`,
      )
      expect(badEscape.status, op.key).toBe(400)
      expectDocumented(op.key, badEscape, 'VALIDATION_FAILED')
      for (const length of [100, 101, 10_000]) {
        const target = op.target.replace('/1', `/${'1'.repeat(length)}`)
        const answer = await exchange(port, `${op.method} ${target} HTTP/1.1\r\n${closing}${auth}\r\n`)
        expect(answer.status, `${op.key} id of ${length}`).toBe(400)
        expectDocumented(op.key, answer, 'VALIDATION_FAILED')
        const problem = JSON.parse(answer.body) as {
          detail: string
          errors: { path: string; message: string }[]
        }
        expect(problem.errors, `${op.key} id of ${length}`).toContainEqual({
          path: '/params/id',
          message: 'must NOT have more than 19 characters',
        })
        // anonymous: the token check comes first, whatever the id
        const anonymous = await exchange(port, `${op.method} ${target} HTTP/1.1\r\n${closing}\r\n`)
        const secured = Boolean(doc.paths[op.key.split(' ')[1]!]?.[op.method.toLowerCase()]?.security)
        expect(anonymous.status, `${op.key} anonymous, id of ${length}`).toBe(secured ? 401 : 400)
      }
    }
  })

  it('a used-up quota → 429 RATE_LIMITED on every operation but the probes', async () => {
    const one = { limit: 1, windowMs: 60_000 }
    const limited = await secondInstance(t, {
      rateLimit: {
        prefix: `${t.prefix}:rl`,
        quotas: { user: one, anonymous: one, write: one, auth: one, routes: {} },
        fallback: 'failClosed',
        timeoutMs: 10_000,
      },
    })
    // one request of each class uses its quota up
    for (const [method, url] of [
      ['GET', '/feed/recommend'],
      ['POST', '/videos/1/play'],
      ['POST', '/auth/login'],
    ] as const)
      await limited.inject({ method, url })
    for (const op of operations) {
      const answer = await limited.inject({ method: op.method as 'GET', url: op.target })
      if (op.probe) expect(answer.statusCode, op.key).toBe(200)
      else {
        expect(answer.statusCode, op.key).toBe(429)
        expectDocumented(
          op.key,
          { status: answer.statusCode, headers: answer.headers, body: answer.body },
          'RATE_LIMITED',
        )
      }
    }
  })

  it('a request on an open connection while the instance shuts down → 503 UNAVAILABLE with Retry-After', async () => {
    const instance: FastifyInstance = await secondInstance(t)
    await instance.listen({ port: 0, host: '127.0.0.1' })
    const closingPort = (instance.server.address() as AddressInfo).port
    // each connection has a request in flight (its body pending), so the close does not drop it
    const inFlight =
      'POST /videos/1/play HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{'
    const connections = await Promise.all(operations.map(() => RawConnection.open(closingPort)))
    for (const connection of connections) connection.write(inFlight)
    await sleep(200)
    const closed = instance.close()
    await sleep(100)
    for (const [i, op] of operations.entries())
      connections[i]!.write(`}${op.method} ${op.target} HTTP/1.1\r\nHost: t\r\n\r\n`)
    await closed
    for (const [i, op] of operations.entries()) {
      const answer = (await connections[i]!.answers())[1]
      expect(answer?.status, op.key).toBe(503)
      expect(answer?.headers['retry-after'], op.key).toBe('1')
      expectDocumented(op.key, answer!, 'UNAVAILABLE')
    }
  })
})

describe('the document against the problem code catalogue', () => {
  const errorResponses = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).flatMap(([method, op]) =>
        Object.entries(op.responses)
          .filter(([status]) => Number(status) >= 400)
          .map(([status, response]) => ({
            key: `${method.toUpperCase()} ${path}`,
            status: Number(status),
            response,
          })),
      ),
    )

  it('names, for each error status of each operation, codes of the catalogue with that status', () => {
    for (const { key, status, response } of errorResponses()) {
      const codes = codesNamed(response.description)
      expect(codes.length, `${key} ${status}: ${response.description}`).toBeGreaterThan(0)
      for (const code of codes)
        expect(problemStatus[code as keyof typeof problemStatus], `${key} ${status} ${code}`).toBe(status)
    }
  })

  it('documents every status of the catalogue and no other error status (no 414)', () => {
    const documented = new Set(errorResponses().map((r) => r.status))
    expect([...documented].sort()).toEqual([...new Set(Object.values(problemStatus))].sort())
  })

  it('names every code of the catalogue somewhere', () => {
    const named = new Set(errorResponses().flatMap((r) => codesNamed(r.response.description)))
    expect([...named].sort()).toEqual(Object.keys(problemStatus).sort())
  })

  it('lists the answers no single request provokes here on every operation: 408 REQUEST_TIMEOUT, 500 INTERNAL', () => {
    // 408 needs REQUEST_TIMEOUT_MS plus Node's 30 s connection check; 500 needs a bug
    for (const op of operations)
      for (const [status, code] of [
        [408, 'REQUEST_TIMEOUT'],
        [500, 'INTERNAL'],
      ] as const) {
        const [method, path] = op.key.split(' ') as [string, string]
        const response = doc.paths[path]?.[method.toLowerCase()]?.responses[String(status)]
        expect(codesNamed(response?.description), `${op.key} ${status}`).toContain(code)
      }
  })
})
