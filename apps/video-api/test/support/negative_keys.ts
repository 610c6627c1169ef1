import type { Cluster, Redis } from 'ioredis'
import { forEachKeyPage } from './redis.js'

/** How a negative ("not found") cache entry begins: floodgate's envelope header (cache/envelope.ts). */
const NEGATIVE_HEADER = 'fg1|n|'

/**
 * The keys under `prefix` that hold a negative cache entry (SCAN, then GETRANGE of each key's
 * first bytes; keys of other types answer WRONGTYPE and are skipped).
 */
export async function negativeKeys(client: Redis | Cluster, prefix: string): Promise<string[]> {
  const found: string[] = []
  await forEachKeyPage(client, prefix, async (node, keys) => {
    const pipeline = node.pipeline()
    for (const key of keys) pipeline.getrange(key, 0, NEGATIVE_HEADER.length - 1)
    const replies = (await pipeline.exec()) ?? []
    replies.forEach(([error, head], i) => {
      if (!error && head === NEGATIVE_HEADER) found.push(keys[i]!)
    })
  })
  return found
}
