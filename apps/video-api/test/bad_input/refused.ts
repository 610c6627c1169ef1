import type { InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readInstallationId } from '../../src/auth/installation.js'
import { createTestApp, createVideo, registerUser, type TestApp } from '../support/app.js'
import { snapshot } from '../support/database.js'

/** One bad request and the problem it must get. */
export interface Case {
  name: string
  request: () => InjectOptions
  status: number
  code: string
  /** Substring the problem detail must contain (what was wrong). */
  detail?: string
}

/** What the cases' requests use, filled in by {@link refusesEach}'s setup (read it inside `request`). */
export const ctx = {
  t: undefined as unknown as TestApp,
  alice: {} as Record<string, string>,
  bob: {} as Record<string, string>,
  video: '',
  priv: '',
  token: '',
  /** This database's installation id: the `aud` every valid token carries. */
  aud: '',
}

export const good = () => ({
  title: 'ok',
  coverUrl: 'https://c.example/a.jpg',
  playUrl: 'https://v.example/a.mp4',
})

/** POST /videos as alice unless other `headers` are given. */
export const post = (payload: unknown, headers = ctx.alice): InjectOptions => ({
  method: 'POST',
  url: '/videos',
  headers,
  payload: payload as object,
})

/**
 * Registers a test app (label `label`) with users alice_b (password alice-password) and bob_b and
 * two videos of alice's, a public one and a private one, then one test per case: a 4xx
 * problem+json with the case's status, code and detail, and no write to the database.
 */
export function refusesEach(label: string, cases: readonly Case[]): void {
  beforeAll(async () => {
    const t = await createTestApp(label)
    ctx.t = t
    ctx.aud = await readInstallationId(t.database.db)
    const alice = await registerUser(t.app, 'alice_b', 'alice-password')
    const bob = await registerUser(t.app, 'bob_b')
    ctx.alice = alice.auth
    ctx.bob = bob.auth
    ctx.token = alice.token
    ctx.video = (await createVideo(t.app, alice.auth)).id
    ctx.priv = (await createVideo(t.app, alice.auth, { visibility: 'private' })).id
  })
  afterAll(() => ctx.t.close())

  describe('bad input is refused with a 4xx problem and no write', () => {
    it.each(cases)('$name → $status $code', async (c) => {
      const before = await snapshot(ctx.t.database.db)
      const res = await ctx.t.app.inject(c.request())
      expect(res.statusCode, res.body).toBe(c.status)
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/)
      const problem = res.json<{
        code: string
        status: number
        detail: string
        errors?: { path: string; message: string }[]
      }>()
      expect(problem.code).toBe(c.code)
      expect(problem.status).toBe(c.status)
      if (c.detail) expect(problem.detail).toContain(c.detail)
      // docs/api.md: a field's VALIDATION_FAILED names each failing field (a malformed request or URL has none)
      const malformed =
        problem.detail === 'malformed HTTP request' || problem.detail.includes('not a valid url')
      if (c.code === 'VALIDATION_FAILED' && !malformed) {
        expect(problem.errors, 'errors').toEqual(expect.arrayContaining([expect.anything()]))
        for (const e of problem.errors ?? []) {
          expect(e.path).toMatch(/^\/(params|querystring|body|headers)(\/|$)/)
          expect(problem.detail).toContain(`${e.path.slice(1)} ${e.message}`)
        }
      }
      expect(await snapshot(ctx.t.database.db)).toEqual(before)
    })
  })
}
