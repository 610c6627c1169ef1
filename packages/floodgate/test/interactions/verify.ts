import type pg from 'pg'
import type { InteractionKeys } from '../../src/interactions/index.js'
import type { RedisClient } from '../../src/redis/index.js'

/** Differences between Redis membership / counters and the PostgreSQL truth; empty when they agree. */
export async function compareRedisWithDatabase(
  redis: RedisClient,
  pool: pg.Pool,
  keys: InteractionKeys,
  videos: number,
): Promise<string[]> {
  const problems: string[] = []
  const rows = async (sql: string) => (await pool.query(sql)).rows as Record<string, string>[]
  const likeRows = await rows('SELECT video_id::text AS v, user_id::text AS u FROM video_likes')
  const favRows = await rows('SELECT video_id::text AS v, user_id::text AS u FROM video_favorites')
  const counts = await rows(`SELECT v.id::text AS id, v.like_count::text AS lc, v.favorite_count::text AS fc,
      v.play_count::text AS pc,
      (SELECT count(*) FROM video_likes l WHERE l.video_id = v.id)::text AS lr,
      (SELECT count(*) FROM video_favorites f WHERE f.video_id = v.id)::text AS fr,
      (SELECT count(*) FROM video_plays p WHERE p.video_id = v.id)::text AS pr
    FROM videos v`)
  const group = (list: Record<string, string>[]) => {
    const map = new Map<string, string[]>()
    for (const r of list) map.set(r.v!, [...(map.get(r.v!) ?? []), r.u!])
    return map
  }
  const likes = group(likeRows)
  const favorites = group(favRows)
  for (let v = 1; v <= videos; v++) {
    const id = String(v)
    const [redisLikes, redisFavs, redisPlays] = await Promise.all([
      redis.smembers(keys.likes(id)),
      redis.smembers(keys.favorites(id)),
      redis.get(keys.plays(id)),
    ])
    const sort = (a: string[]) => [...a].sort().join(',')
    if (sort(redisLikes) !== sort(likes.get(id) ?? [])) problems.push(`video ${id}: likes differ`)
    if (sort(redisFavs) !== sort(favorites.get(id) ?? [])) problems.push(`video ${id}: favorites differ`)
    const c = counts.find((r) => r.id === id)!
    if (c.lc !== c.lr) problems.push(`video ${id}: like_count ${c.lc} != rows ${c.lr}`)
    if (c.fc !== c.fr) problems.push(`video ${id}: favorite_count ${c.fc} != rows ${c.fr}`)
    if (c.pc !== c.pr) problems.push(`video ${id}: play_count ${c.pc} != rows ${c.pr}`)
    if ((redisPlays ?? '0') !== c.pc)
      problems.push(`video ${id}: redis plays ${redisPlays} != play_count ${c.pc}`)
  }
  return problems
}
