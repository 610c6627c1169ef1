import type pg from 'pg'
import type { InteractionKeys } from '../../src/interactions/index.js'
import type { RedisClient } from '../../src/redis/index.js'

/** Differences between Redis membership / counters and the PostgreSQL truth; empty when they agree. */
export async function compareRedisWithDatabase(
  redis: RedisClient,
  pool: pg.Pool,
  keys: InteractionKeys,
  items: number,
): Promise<string[]> {
  const problems: string[] = []
  const rows = async (sql: string) => (await pool.query(sql)).rows as Record<string, string>[]
  const likeRows = await rows('SELECT item_id::text AS v, user_id::text AS u FROM item_likes')
  const favRows = await rows('SELECT item_id::text AS v, user_id::text AS u FROM item_favorites')
  const counts = await rows(`SELECT v.id::text AS id, v.like_count::text AS lc, v.favorite_count::text AS fc,
      v.play_count::text AS pc,
      (SELECT count(*) FROM item_likes l WHERE l.item_id = v.id)::text AS lr,
      (SELECT count(*) FROM item_favorites f WHERE f.item_id = v.id)::text AS fr,
      (SELECT count(*) FROM item_plays p WHERE p.item_id = v.id)::text AS pr
    FROM items v`)
  const group = (list: Record<string, string>[]) => {
    const map = new Map<string, string[]>()
    for (const r of list) map.set(r.v!, [...(map.get(r.v!) ?? []), r.u!])
    return map
  }
  const likes = group(likeRows)
  const favorites = group(favRows)
  for (let v = 1; v <= items; v++) {
    const id = String(v)
    const [redisLikes, redisFavs, redisPlays] = await Promise.all([
      redis.smembers(keys.likes(id)),
      redis.smembers(keys.favorites(id)),
      redis.get(keys.plays(id)),
    ])
    const sort = (a: string[]) => [...a].sort().join(',')
    if (sort(redisLikes) !== sort(likes.get(id) ?? [])) problems.push(`item ${id}: likes differ`)
    if (sort(redisFavs) !== sort(favorites.get(id) ?? [])) problems.push(`item ${id}: favorites differ`)
    const c = counts.find((r) => r.id === id)!
    if (c.lc !== c.lr) problems.push(`item ${id}: like_count ${c.lc} != rows ${c.lr}`)
    if (c.fc !== c.fr) problems.push(`item ${id}: favorite_count ${c.fc} != rows ${c.fr}`)
    if (c.pc !== c.pr) problems.push(`item ${id}: play_count ${c.pc} != rows ${c.pr}`)
    if ((redisPlays ?? '0') !== c.pc)
      problems.push(`item ${id}: redis plays ${redisPlays} != play_count ${c.pc}`)
  }
  return problems
}
