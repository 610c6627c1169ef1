import type { TestApp } from '../support/app.js'
import { snapshot } from '../support/database.js'

/**
 * What a write may change: the PostgreSQL rows (counts and a digest of `videos`, see snapshot) and
 * the interaction state in Redis: each partition's event stream (length and last id: every like,
 * favourite or play that changed something appended an event there, whatever its video) and
 * all-time rankings, and the like and favourite sets and play counters of the fixture videos `ids`.
 * Named keys only, no SCAN: the test Redis is shared, and a SCAN walks every test's keys.
 */
export async function stateOf(t: TestApp, ids: readonly string[]): Promise<string> {
  const keys = t.app.interactions.keys
  const redis = t.redis
  const reads: Promise<unknown>[] = []
  for (const p of keys.allPartitions()) {
    const stream = keys.stream(p)
    reads.push(redis.xlen(stream), redis.xrevrange(stream, '+', '-', 'COUNT', 1))
    for (const metric of ['likes', 'plays'] as const)
      reads.push(redis.zrange(keys.rankAll(p, metric), '0', '-1', 'WITHSCORES'))
  }
  for (const id of ids) {
    const sorted = (members: Promise<string[]>) => members.then((list) => list.sort())
    reads.push(
      sorted(redis.smembers(keys.likes(id))),
      sorted(redis.smembers(keys.favorites(id))),
      redis.get(keys.plays(id)),
    )
  }
  const [rows, redisState] = await Promise.all([snapshot(t.database.db), Promise.all(reads)])
  return JSON.stringify([rows, redisState])
}
