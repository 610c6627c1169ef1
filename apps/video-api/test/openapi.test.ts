import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATIONS } from '../src/http/openapi.js'
import { createTestApp, type TestApp } from './support/app.js'

interface Response {
  description?: string
  content?: Record<string, { schema?: { $ref?: string } }>
}
interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  responses: Record<string, Response>
}
interface Document {
  paths: Record<string, Record<string, Operation>>
  tags?: { name: string }[]
  components: { schemas: Record<string, unknown> }
}

let t: TestApp
let doc: Document
const operations: { key: string; op: Operation }[] = []

beforeAll(async () => {
  t = await createTestApp('openapi', { cache: true })
  const res = await t.app.inject({ method: 'GET', url: '/docs/json' })
  expect(res.statusCode).toBe(200)
  doc = res.json<Document>()
  for (const [path, ops] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(ops))
      operations.push({ key: `${method.toUpperCase()} ${path}`, op })
})
afterAll(() => t.close())

const PROBES = new Set(['GET /healthz', 'GET /readyz'])
const SHED = [
  'GET /videos/{id}',
  'GET /users/{id}/videos',
  'GET /feed/recommend',
  'GET /videos/{id}/stats',
  'GET /me/likes',
  'GET /me/favorites',
  'GET /rankings/hot',
]

describe('OpenAPI document', () => {
  it('documents every route of the app, each listed in OPERATIONS', () => {
    expect(operations.map((o) => o.key).sort()).toEqual(Object.keys(OPERATIONS).sort())
  })

  it('gives each operation a unique operationId, a summary and a declared tag', () => {
    const ids = operations.map(({ op }) => op.operationId)
    expect(ids.filter((id) => typeof id !== 'string' || !/^[a-z][A-Za-z]+$/.test(id))).toEqual([])
    expect(new Set(ids).size).toBe(ids.length)
    const declared = new Set((doc.tags ?? []).map((tag) => tag.name))
    for (const { key, op } of operations) {
      expect(op.summary, key).toMatch(/\S/)
      expect(op.tags?.length, key).toBe(1)
      expect(declared.has(op.tags![0]!), `${key}: tag ${op.tags![0]} is declared`).toBe(true)
    }
  })

  it('lists 429 on every rate-limited route (all but the probes)', () => {
    for (const { key, op } of operations) {
      if (PROBES.has(key)) expect(op.responses['429'], key).toBeUndefined()
      else expect(op.responses['429']?.content?.['application/problem+json'], key).toBeDefined()
    }
  })

  it('lists 503 OVERLOADED where the database guard can shed', () => {
    for (const key of SHED) {
      const op = operations.find((o) => o.key === key)?.op
      expect(op?.responses['503']?.description, key).toContain('OVERLOADED')
    }
    const others = operations.filter(({ key }) => !SHED.includes(key))
    for (const { key, op } of others)
      expect(op.responses['503']?.description ?? '', key).not.toContain('OVERLOADED')
  })

  it('declares problem responses as application/problem+json', () => {
    for (const { key, op } of operations)
      for (const [status, response] of Object.entries(op.responses)) {
        const json = response.content?.['application/json']?.schema?.$ref
        expect(json, `${key} ${status}`).not.toBe('#/components/schemas/Problem')
        if (Number(status) >= 400)
          expect(response.content?.['application/problem+json']?.schema?.$ref, `${key} ${status}`).toBe(
            '#/components/schemas/Problem',
          )
      }
  })

  it("keeps /readyz's own not-ready body next to the problem of a shutting-down instance", () => {
    const notReady = operations.find((o) => o.key === 'GET /readyz')?.op.responses['503']
    expect(Object.keys(notReady?.content ?? {}).sort()).toEqual([
      'application/json',
      'application/problem+json',
    ])
  })

  it('names its component schemas (no def-0)', () => {
    const names = Object.keys(doc.components.schemas)
    expect(names).toEqual(expect.arrayContaining(['Problem', 'Video']))
    expect(names.filter((n) => /^def-\d+$/.test(n))).toEqual([])
  })

  it('serves an interactive page at /docs', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' })
    expect(res.statusCode).toBeLessThan(400)
    const page = await t.app.inject({ method: 'GET', url: res.headers.location ?? '/docs' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toContain('text/html')
  })
})
