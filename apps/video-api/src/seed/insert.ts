import { createHash } from 'node:crypto'
import { type Kysely, sql } from 'kysely'
import { hashPassword } from '../auth/password.js'
import type { Database } from '../db/types.js'
import { generateVideos, type SeedPlan, username } from './generate.js'
import { Prng } from './prng.js'

/** Password of every seeded user (demo catalog only). */
export const SEED_PASSWORD = 'floodgate-demo'

export interface SeedReport {
  users: number
  videos: number
  /** Wall time (ms). */
  elapsedMs: number
  /** (users + videos + popularity rows) per second. */
  rowsPerSecond: number
}

/** Rows per multi-row INSERT (13 parameters per video row, far below PostgreSQL's 65,535). */
const BATCH = 1000

/**
 * Inserts the catalog described by `plan` in batches of {@link BATCH} rows,
 * in one transaction. Seeded users share one scrypt hash of {@link SEED_PASSWORD}
 * (salt derived from the seed) so seeding stays fast and deterministic.
 * Then ANALYZEs the three tables (PostgreSQL manual, "Populating a Database": run ANALYZE after a
 * bulk load): until autovacuum gets to them, the planner would guess, and the Bloom rebuild's
 * keyset page (`cache/video_ids.ts`) was a bitmap scan of a whole index plus a sort, 79 ms for a
 * page of 5,000 of 100,000 videos instead of 2.4 ms by the primary key.
 * @throws when a user of this seed already exists (unique username).
 */
export async function seedCatalog(db: Kysely<Database>, plan: SeedPlan): Promise<SeedReport> {
  const started = performance.now()
  const prng = new Prng(plan.seed)
  const salt = createHash('sha256').update(`video-api-seed-${plan.seed}`).digest().subarray(0, 16)
  const passwordHash = await hashPassword(SEED_PASSWORD, salt)
  await db.transaction().execute(async (tx) => {
    const userIds: string[] = []
    for (let from = 0; from < plan.users; from += BATCH) {
      const rows = []
      for (let i = from; i < Math.min(plan.users, from + BATCH); i++) {
        rows.push({
          username: username(plan.seed, i),
          password_hash: passwordHash,
          created_at: new Date(plan.anchorMs - 200 * 86_400_000),
        })
      }
      const inserted = await tx.insertInto('users').values(rows).returning('id').execute()
      for (const row of inserted) userIds.push(String(row.id))
    }
    let batch: ReturnType<typeof generateVideos> extends Generator<infer V> ? V[] : never = []
    const flush = async () => {
      if (batch.length === 0) return
      const ids = await tx
        .insertInto('videos')
        .values(
          batch.map((v) => ({
            author_id: userIds[v.authorIndex]!,
            title: v.title,
            description: v.description,
            cover_url: v.coverUrl,
            play_url: v.playUrl,
            visibility: v.visibility,
            status: v.status,
            created_at: v.createdAt,
            updated_at: v.createdAt,
          })),
        )
        .returning('id')
        .execute()
      await tx
        .insertInto('video_popularity')
        .values(batch.map((v, i) => ({ video_id: String(ids[i]!.id), rank: v.rank })))
        .execute()
      batch = []
    }
    for (const video of generateVideos(plan, prng)) {
      batch.push(video)
      if (batch.length >= BATCH) await flush()
    }
    await flush()
  })
  await sql`analyze users, videos, video_popularity`.execute(db)
  const elapsedMs = performance.now() - started
  const rows = plan.users + plan.videos * 2
  return {
    users: plan.users,
    videos: plan.videos,
    elapsedMs,
    rowsPerSecond: Math.round(rows / (elapsedMs / 1000)),
  }
}
