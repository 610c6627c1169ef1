import { randomBytes } from 'node:crypto'
import { Cluster, type Redis } from 'ioredis'

/** A fresh key prefix per test file (`fgtest:<label>:<pid>:<8 hex>`), so runs never see each other's keys. */
export function uniquePrefix(label: string): string {
  return `fgtest:${label}:${process.pid}:${randomBytes(4).toString('hex')}`
}

/** What {@link deleteByPrefix} needs of a single node (ioredis 5 and 6 clients both fit). */
export interface KeyScanner {
  scan(
    cursor: string,
    matchToken: 'MATCH',
    pattern: string,
    countToken: 'COUNT',
    count: number,
  ): Promise<[cursor: string, keys: string[]]>
  unlink(...keys: string[]): Promise<number>
}

/**
 * Deletes every key under `prefix` (SCAN, never KEYS) and returns how many: keys that start with
 * it and keys whose hash tag opens with it (`{prefix…}…`, e.g. a fencing counter). On a cluster it
 * scans every master and deletes key by key (the keys of one SCAN page may sit in different slots).
 */
export async function deleteByPrefix(client: Cluster | KeyScanner, prefix: string): Promise<number> {
  let deleted = 0
  await forEachKeyPage(client, prefix, async (node, keys, perKey) => {
    if (!perKey) {
      deleted += await node.unlink(...keys)
      return
    }
    const pipeline = (node as Redis).pipeline()
    for (const key of keys) pipeline.unlink(key)
    for (const [error, count] of (await pipeline.exec()) ?? []) {
      if (error) throw error
      deleted += Number(count)
    }
  })
  return deleted
}

/**
 * Calls `page` with each non-empty SCAN page of keys under `prefix` (as {@link deleteByPrefix}
 * reads them), on the node or on every cluster master. `perKey` is true on a cluster: the keys of
 * one page may sit in different slots, so multi-key commands over them are refused there.
 */
export async function forEachKeyPage<Node extends KeyScanner>(
  client: Cluster | Node,
  prefix: string,
  page: (node: Node | Redis, keys: string[], perKey: boolean) => Promise<void>,
): Promise<void> {
  if (!(client instanceof Cluster)) return scanNode(client, prefix, (keys) => page(client, keys, false))
  if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
  for (const node of client.nodes('master')) await scanNode(node, prefix, (keys) => page(node, keys, true))
}

async function scanNode(
  node: KeyScanner,
  prefix: string,
  page: (keys: string[]) => Promise<void>,
): Promise<void> {
  for (const pattern of [`${prefix}*`, `{${prefix}*`]) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
      cursor = next
      if (keys.length > 0) await page(keys)
    } while (cursor !== '0')
  }
}
