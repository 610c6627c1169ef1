import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, createVideo, registerUser, type TestApp } from './support/app.js'

let t: TestApp
let author: Awaited<ReturnType<typeof registerUser>>
let other: Awaited<ReturnType<typeof registerUser>>

beforeAll(async () => {
  t = await createTestApp('page')
  author = await registerUser(t.app, 'author_p')
  other = await registerUser(t.app, 'other_p')
})
afterAll(() => t.close())

type Page = { items: { id: string; status: string; visibility: string }[]; nextCursor: string | null }
const list = async (query: string, headers: Record<string, string> = {}) => {
  const res = await t.app.inject({ method: 'GET', url: `/users/${author.userId}/videos${query}`, headers })
  expect(res.statusCode).toBe(200)
  return res.json<Page>()
}

describe('GET /users/:id/videos', () => {
  it('walks every video exactly once while new ones are inserted between pages', async () => {
    const initial = []
    for (let i = 0; i < 25; i++) initial.push((await createVideo(t.app, author.auth)).id)
    // Same created_at for several rows: the id tiebreak must keep the order total.
    await sql`update videos set created_at = '2026-01-01T00:00:00.123456Z' where id in (${sql.join(initial.slice(5, 12))})`.execute(
      t.database.db,
    )
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: Page = await list(`?limit=7${cursor ? `&cursor=${cursor}` : ''}`)
      seen.push(...page.items.map((v) => v.id))
      cursor = page.nextCursor
      pages++
      await createVideo(t.app, author.auth) // newer than everything: must not shift later pages
    } while (cursor)
    expect(pages).toBe(4)
    expect(new Set(seen).size).toBe(seen.length)
    expect([...seen].sort()).toEqual([...initial].sort())
  })

  it('shows drafts and private videos to the owner only', async () => {
    const draft = await createVideo(t.app, author.auth, { status: 'draft' })
    const priv = await createVideo(t.app, author.auth, { visibility: 'private' })
    const ownerIds = (await list('?limit=100', author.auth)).items.map((v) => v.id)
    const otherIds = (await list('?limit=100', other.auth)).items.map((v) => v.id)
    const anonIds = (await list('?limit=100')).items.map((v) => v.id)
    expect(ownerIds).toEqual(expect.arrayContaining([draft.id, priv.id]))
    expect(otherIds).not.toContain(draft.id)
    expect(otherIds).not.toContain(priv.id)
    expect(anonIds).toEqual(otherIds)
  })

  it('defaults to 20 items and 404s for an unknown user', async () => {
    expect((await list('')).items).toHaveLength(20)
    const res = await t.app.inject({ method: 'GET', url: '/users/987654321/videos' })
    expect(res.statusCode).toBe(404)
  })
})
