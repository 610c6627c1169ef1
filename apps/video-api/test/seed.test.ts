import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seedCatalog } from '../src/seed/insert.js'
import { Prng } from '../src/seed/prng.js'
import { Zipf } from '../src/seed/zipf.js'
import { createTestDatabase, type TestDatabase } from './support/database.js'

let a: TestDatabase
let b: TestDatabase
const plan = { users: 30, videos: 600, seed: 7, anchorMs: Date.UTC(2026, 5, 1) }

beforeAll(async () => {
  ;[a, b] = await Promise.all([createTestDatabase('seeda'), createTestDatabase('seedb')])
})
afterAll(async () => {
  await Promise.all([a.close(), b.close()])
})

const dump = async (t: TestDatabase) => {
  const users = await sql`select id::text, username, password_hash from users order by id`.execute(t.db)
  const videos = await sql`
    select v.id::text, v.author_id::text, title, description, cover_url, play_url, visibility, status,
           created_at::text, p.rank
    from videos v join video_popularity p on p.video_id = v.id order by v.id`.execute(t.db)
  return { users: users.rows, videos: videos.rows as Record<string, unknown>[] }
}

describe('seed', () => {
  it('same seed → same rows; another seed → different rows', async () => {
    const report = await seedCatalog(a.db, plan)
    await seedCatalog(b.db, plan)
    expect(report.rowsPerSecond).toBeGreaterThan(0)
    const [da, db] = [await dump(a), await dump(b)]
    expect(da.videos).toHaveLength(plan.videos)
    expect(da).toEqual(db)
    await seedCatalog(a.db, { ...plan, seed: 8, users: 2, videos: 5 })
    const other = (await dump(a)).videos.slice(plan.videos).map((v) => v.title)
    expect(other).not.toEqual(da.videos.slice(0, 5).map((v) => v.title))
  })

  it('has realistic shapes: bounded titles, skewed authors, months of history, ranks a permutation', async () => {
    const { videos } = await dump(a)
    const first = videos.slice(0, plan.videos)
    for (const v of first) {
      expect((v.title as string).length).toBeGreaterThanOrEqual(1)
      expect((v.title as string).length).toBeLessThanOrEqual(100)
      expect((v.description as string).length).toBeLessThanOrEqual(5000)
    }
    const ranks = first.map((v) => v.rank as number).sort((x, y) => x - y)
    expect(ranks).toEqual(Array.from({ length: plan.videos }, (_, i) => i + 1))
    const perAuthor = new Map<string, number>()
    for (const v of first)
      perAuthor.set(v.author_id as string, (perAuthor.get(v.author_id as string) ?? 0) + 1)
    const counts = [...perAuthor.values()].sort((x, y) => y - x)
    expect(counts[0]!).toBeGreaterThan(5 * counts[Math.floor(counts.length / 2)]!)
    const times = first.map((v) =>
      Date.parse((v.created_at as string).replace(' ', 'T').replace(/\+00$/, 'Z')),
    )
    expect((Math.max(...times) - Math.min(...times)) / 86_400_000).toBeGreaterThan(90)
  })

  it('leaves its tables analyzed, so the planner knows every seeded video is live', async () => {
    // planner statistics of this run's tables (its schema; PGlite: public)
    const stats = await sql<{ tablename: string; attname: string; null_frac: number }>`
      select tablename, attname, null_frac from pg_stats
      where schemaname = current_schema() and tablename in ('users', 'videos', 'video_popularity')`.execute(
      a.db,
    )
    const tables = new Set(stats.rows.map((r) => r.tablename))
    expect([...tables].sort()).toEqual(['users', 'video_popularity', 'videos'])
    const deletedAt = stats.rows.find((r) => r.tablename === 'videos' && r.attname === 'deleted_at')
    expect(deletedAt?.null_frac).toBe(1)
  })

  it('Zipf(s=1) sampler: rank 1 drawn about twice as often as rank 2, and in proportion to 1/H_n', () => {
    const zipf = new Zipf(1000, 1)
    const prng = new Prng(1)
    const hits = new Array<number>(1001).fill(0)
    const draws = 200_000
    for (let i = 0; i < draws; i++) hits[zipf.sample(prng)]!++
    let harmonic = 0
    for (let k = 1; k <= 1000; k++) harmonic += 1 / k
    expect(hits[1]! / draws).toBeCloseTo(1 / harmonic, 2)
    expect(hits[1]! / hits[2]!).toBeGreaterThan(1.8)
    expect(hits[1]! / hits[2]!).toBeLessThan(2.2)
  })
})
