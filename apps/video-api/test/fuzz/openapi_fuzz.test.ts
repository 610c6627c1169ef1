import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { createSigner } from 'fast-jwt'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readInstallationId } from '../../src/auth/installation.js'
import { createTokenService } from '../../src/auth/tokens.js'
import { defaultConfig } from '../../src/config/load.js'
import { OPERATIONS } from '../../src/http/openapi.js'
import {
  createAdminTestApp,
  createVideo,
  registerUser,
  TEST_JWT_SECRET,
  type TestApp,
} from '../support/app.js'
import type { OpenApiDocument } from '../support/openapi_document.js'
import {
  type DocOperation,
  describeRequest,
  type Fixtures,
  type FuzzRequest,
  requestsFor,
} from './broken_requests.js'
import { Sender } from './http_send.js'
import { AnswerChecker } from './invariants.js'
import type { Schema } from './schema_values.js'
import { stateOf } from './state.js'

/**
 * Every operation of /docs/json, called over a real socket with requests generated from its
 * schemas and then broken (types, lengths, encodings, nesting, tokens): fast-check, seeded and
 * bounded. Each answer must keep the invariants of AnswerChecker; a refused write (any method but
 * GET, status >= 400) must leave PostgreSQL and the Redis interaction state as they were; every
 * request gets a whole answer (no reset, no hang) and the process stays up.
 *
 * FUZZ_SEED and FUZZ_RUNS (requests per operation) replay or widen a run. The app runs as in
 * production (read cache on) except: no rate limit (429s would soon hide every other answer) and no
 * flush consumer (its background writes would blur "a refused write changed nothing").
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_270_127)
const RUNS = Number(process.env.FUZZ_RUNS ?? 40)

let t: TestApp
let sender: Sender
let checker: AnswerChecker
let fixtures: Fixtures
const operations: DocOperation[] = []
let sent = 0
/** Answers by operation and status, printed at the end: what the run reached. */
const tally = new Map<string, Map<number, number>>()
const started = Date.now()

beforeAll(async () => {
  const withAdmin = await createAdminTestApp('fuzz', { cache: true })
  t = withAdmin
  const admin = withAdmin.admin
  const alice = await registerUser(t.app, 'fuzz_alice')
  const bob = await registerUser(t.app, 'fuzz_bob')
  const video = (fields: Record<string, unknown> = {}, auth = alice.auth) =>
    createVideo(t.app, auth, fields).then((v) => v.id)
  const deleted = await video()
  await t.app.inject({ method: 'DELETE', url: `/videos/${deleted}`, headers: alice.auth })
  const audience = await readInstallationId(t.database.db)
  const expired = createSigner({
    key: TEST_JWT_SECRET,
    algorithm: 'HS256',
    expiresIn: 60_000,
    iss: 'video-api',
    aud: audience,
    clockTimestamp: Date.now() - 3_600_000,
  })({ sub: alice.userId })
  const unsigned = (payload: object) =>
    `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.`
  const page = await t.app.inject({ method: 'GET', url: `/users/${alice.userId}/videos?limit=1` })
  fixtures = {
    queryValues: { cursor: [page.json<{ nextCursor: string }>().nextCursor] },
    ids: [
      await video(),
      await video({ visibility: 'private' }),
      await video({ status: 'draft' }),
      deleted,
      await video({}, bob.auth),
      alice.userId,
      bob.userId,
      admin.userId,
      '999999999',
      '9223372036854775807',
      '9223372036854775808',
    ],
    validAuthorizations: [alice, bob, admin].map((user) => `Bearer ${user.token}`),
    refusedAuthorizations: [
      `Bearer ${expired}`,
      `Bearer ${createTokenService(TEST_JWT_SECRET, 600, 'another-database').issue(alice.userId)}`,
      `Bearer ${createTokenService(TEST_JWT_SECRET, 600, audience).issue('999999999')}`,
      `Bearer ${createTokenService('another-secret-another-secret-0123456789', 600, audience).issue(alice.userId)}`,
      `Bearer ${alice.token.slice(0, -2)}${alice.token.endsWith('AA') ? 'BB' : 'AA'}`,
      `Bearer ${unsigned({ sub: alice.userId, iss: 'video-api', aud: audience, exp: 9_999_999_999 })}`,
    ],
    bodyLimitBytes: defaultConfig().bodyLimitBytes,
  }
  const document = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json<OpenApiDocument>()
  checker = new AnswerChecker(document)
  for (const [path, methods] of Object.entries(document.paths))
    for (const [method, op] of Object.entries(methods)) operations.push(docOperation(method, path, op))
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  sender = new Sender((t.app.server.address() as AddressInfo).port)
})

afterAll(async () => {
  sender?.close()
  await t?.close()
})

describe('fuzzing every operation of the OpenAPI document', () => {
  it('covers every operation', () => {
    expect(operations.map((op) => op.key).sort()).toEqual(Object.keys(OPERATIONS).sort())
  })

  for (const [i, key] of Object.keys(OPERATIONS).sort().entries()) {
    it(`${key}: ${RUNS} broken requests keep the invariants`, async () => {
      const op = operations.find((o) => o.key === key)
      if (!op) throw new Error(`${key} is not in the document`)
      await fc.assert(
        fc.asyncProperty(requestsFor(op, fixtures), (request) => keepsInvariants(op, request)),
        { seed: SEED + i, numRuns: RUNS, endOnFailure: true, reporter: shortReport(SEED + i) },
      )
    })
  }

  it('leaves the process up and ready', async () => {
    const probe = (path: string) =>
      sender.send({ method: 'GET', target: path, headers: {}, chunked: false, breaks: [] })
    expect((await probe('/healthz')).status).toBe(200)
    expect((await probe('/readyz')).status).toBe(200)
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    const lines = [...tally].map(
      ([key, byStatus]) =>
        `  ${key}: ${[...byStatus]
          .sort(([a], [b]) => a - b)
          .map(([s, n]) => `${s}×${n}`)
          .join(' ')}`,
    )
    console.info(
      `fuzz: seed ${SEED}, ${sent} requests over ${operations.length} operations in ${seconds} s\n${lines.join('\n')}`,
    )
  })
})

async function keepsInvariants(op: DocOperation, request: FuzzRequest): Promise<void> {
  const write = request.method !== 'GET'
  const before = write ? await stateOf(t, fixtures.ids) : ''
  sent++
  const answer = await sender.send(request).catch((error: Error) => {
    throw new Error(`${op.key}: no whole answer (${error.message})\n${describeRequest(request)}`)
  })
  const byStatus = tally.get(op.key) ?? new Map<number, number>()
  tally.set(op.key, byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1))
  const failures = checker.broken(op.key, answer)
  if (write && answer.status >= 400 && (await stateOf(t, fixtures.ids)) !== before)
    failures.push(`the refused write changed the state`)
  if (failures.length > 0)
    throw new Error(
      `${op.key} → ${answer.status}: ${failures.join('; ')}\n${describeRequest(request)}\n  answer: ${answer.body.slice(0, 400)}`,
    )
}

/** fast-check's report without the counterexample object (bodies of 100 KB): our message, the seed and path to replay. */
function shortReport(seed: number) {
  return (details: fc.RunDetails<[FuzzRequest]>) => {
    if (!details.failed) return
    const error =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)
    throw new Error(
      `${error}\n(run ${details.numRuns} of seed ${seed}; replay with FUZZ_SEED=${SEED}, fast-check path ${details.counterexamplePath})`,
    )
  }
}

type Parameter = { in: string; name: string; schema: Schema }

function docOperation(method: string, path: string, op: Record<string, unknown>): DocOperation {
  const parameters = (op.parameters ?? []) as Parameter[]
  const body = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content?.[
    'application/json'
  ]?.schema
  return {
    key: `${method.toUpperCase()} ${path}`,
    method: method.toUpperCase(),
    path,
    pathParams: parameters.filter((p) => p.in === 'path'),
    query: parameters.filter((p) => p.in === 'query'),
    body,
  }
}
