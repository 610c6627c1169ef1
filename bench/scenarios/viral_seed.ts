import { InteractionKeys } from 'floodgate'
import pg from 'pg'
import { restoreMembersOf } from '../../packages/floodgate/src/counters/rebuild.js'
import { oldLayoutKeys } from './legacy/interactions.js'
import type { ModeDeployment } from './modes.js'
import { pgUrl } from './modes.js'

/** Restore steps (of maxMembersPerStep members each) in flight while seeding the library's layout. */
const RESTORE_IN_FLIGHT = 64
/** Members per SADD of the older layout's seeding, and SADDs per pipeline. */
const SADD_MEMBERS = 1000
const SADDS_PER_PIPELINE = 50

export interface ViralSeed {
  /** The storm's users: the first `users` user ids (the catalog's, then seeded ones). */
  users: string[]
  /** Members of the video's likes after the seeding (every video_likes row of it). */
  likers: number
  /** Seconds: PostgreSQL (users, likes, like_count), then Redis. */
  pgS: number
  redisS: number
}

/**
 * Seeds one mode for the viral scenario, never through HTTP: PostgreSQL gets `likers` users
 * (`viral_<n>`, one INSERT … SELECT generate_series, more if the catalog lacks storm users) who
 * all like `video` (one INSERT … SELECT) and its like_count; Redis gets the video's every liker
 * from PostgreSQL, in the library's layout through its restore path (`restoreMembersOf`, steps of
 * 250, 64 in flight), or with `oldLayout` in the older design's one SET (pipelined SADDs of 1,000).
 */
export async function seedViral(
  d: ModeDeployment,
  database: string,
  video: string,
  options: { likers: number; users: number; oldLayout: boolean },
): Promise<ViralSeed> {
  const started = performance.now()
  const db = new pg.Client({ connectionString: pgUrl(database) })
  await db.connect()
  let members: string[]
  let users: string[]
  try {
    const existing = Number(
      (await db.query<{ n: string }>('select count(*)::text as n from users')).rows[0]!.n,
    )
    const added = Math.max(options.likers, options.users - existing)
    await db.query(
      `insert into users (username, password_hash)
       select 'viral_' || g, (select password_hash from users order by id limit 1) from generate_series(1, $1::int) g`,
      [added],
    )
    await db.query(
      `insert into video_likes (video_id, user_id)
       select $1::bigint, id from users where username like 'viral\\_%' order by id limit $2::int
       on conflict do nothing`,
      [video, options.likers],
    )
    await db.query(
      'update videos set like_count = (select count(*) from video_likes where video_id = $1::bigint) where id = $1::bigint',
      [video],
    )
    users = (
      await db.query<{ id: string }>('select id::text as id from users order by id limit $1::int', [
        options.users,
      ])
    ).rows.map((r) => r.id)
    members = (
      await db.query<{ u: string }>(
        'select user_id::text as u from video_likes where video_id = $1::bigint',
        [video],
      )
    ).rows.map((r) => r.u)
  } finally {
    await db.end()
  }
  const pgDone = performance.now()
  const keys = new InteractionKeys(d.prefix)
  if (options.oldLayout) {
    const set = oldLayoutKeys(keys, video).likes
    for (let i = 0; i < members.length; i += SADD_MEMBERS * SADDS_PER_PIPELINE) {
      const pipeline = d.redis.pipeline()
      for (let j = i; j < Math.min(members.length, i + SADD_MEMBERS * SADDS_PER_PIPELINE); j += SADD_MEMBERS)
        pipeline.sadd(set, ...members.slice(j, j + SADD_MEMBERS))
      await pipeline.exec()
    }
  } else {
    const chunk = Math.ceil(members.length / RESTORE_IN_FLIGHT)
    await Promise.all(
      Array.from({ length: RESTORE_IN_FLIGHT }, (_, i) =>
        restoreMembersOf(
          { redis: d.redis, keys, topK: 1000 },
          'likes',
          video,
          members.slice(i * chunk, (i + 1) * chunk),
          'add',
        ),
      ),
    )
  }
  return {
    users,
    likers: members.length,
    pgS: Math.round((pgDone - started) / 100) / 10,
    redisS: Math.round((performance.now() - pgDone) / 100) / 10,
  }
}
