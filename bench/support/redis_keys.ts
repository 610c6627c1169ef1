/** The two commands {@link deleteByPrefix} needs (ioredis 5 and 6 clients both fit). */
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
 * Deletes every key starting with `prefix` (SCAN MATCH `<prefix>*`, `count` keys a step, then
 * UNLINK), so a bench run leaves nothing behind on the shared Redis. Single node only (SCAN
 * walks one node).
 */
export async function deleteByPrefix(redis: KeyScanner, prefix: string, count = 1000): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', count)
    cursor = next
    if (keys.length > 0) await redis.unlink(...keys)
  } while (cursor !== '0')
}
