import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { TestApp } from '../support/app.js'
import { snapshot } from '../support/database.js'
import { forEachKeyPage } from '../support/redis.js'

/**
 * What a write may change: the PostgreSQL rows (counts and a digest of `videos`, see snapshot) and
 * the interaction state in Redis (likes, favourites, plays, dedupe markers, event streams, restore
 * markers, rankings) as a digest of every such key's type and value. Left out: the read cache and
 * the rankings' window caches (a refused write may read, and reads fill caches) and the rate limit
 * counters (off in the fuzz).
 */
export async function stateOf(t: TestApp): Promise<string> {
  const rows = await snapshot(t.database.db)
  const entries: string[] = []
  for (const area of ['ix:', 'rank:']) {
    await forEachKeyPage(t.redis, `${t.prefix}:${area}`, async (node, page) => {
      const keys = page.filter((key) => !key.includes(':win:'))
      entries.push(...(await valuesOf(node as Redis, keys)))
    })
  }
  entries.sort()
  const digest = createHash('sha256').update(entries.join('\n')).digest('hex')
  return `${JSON.stringify(rows)} redis ${entries.length} keys ${digest}`
}

/** `key type value` of each key, in two pipelines (types, then values) on the node that has them. */
async function valuesOf(node: Redis, keys: string[]): Promise<string[]> {
  const types = await run(node, keys, (pipeline, key) => pipeline.type(key))
  const values = await run(node, keys, (pipeline, key, i) => {
    switch (types[i]) {
      case 'string':
        return pipeline.get(key)
      case 'set':
        return pipeline.smembers(key)
      case 'zset':
        return pipeline.zrange(key, '0', '-1', 'WITHSCORES')
      case 'hash':
        return pipeline.hgetall(key)
      case 'stream':
        return pipeline.xinfo('STREAM', key)
      default:
        return pipeline.exists(key)
    }
  })
  return keys.map((key, i) => {
    const value = values[i]
    // a set's members come in no order; a stream's info: length, first and last entry ids
    const shown = types[i] === 'set' ? [...(value as string[])].sort() : value
    return `${key} ${types[i]} ${JSON.stringify(shown)}`
  })
}

async function run(
  node: Redis,
  keys: string[],
  add: (pipeline: ReturnType<Redis['pipeline']>, key: string, i: number) => unknown,
): Promise<unknown[]> {
  const pipeline = node.pipeline()
  for (const [i, key] of keys.entries()) add(pipeline, key, i)
  const results = (await pipeline.exec()) ?? []
  return results.map(([error, value]) => {
    if (error) throw error
    return value
  })
}
