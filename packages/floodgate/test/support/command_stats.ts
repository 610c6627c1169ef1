import type { Redis } from 'ioredis'

/**
 * Calls per command on `redis`'s server since its last CONFIG RESETSTAT (commands run by scripts
 * included; `config` itself left out). Meaningful on a private server only.
 */
export async function commandCalls(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats')
  const calls: Record<string, number> = {}
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    if (!match[1]!.startsWith('config')) calls[match[1]!] = Number(match[2])
  return calls
}

/** Keys Redis looked up since the last `CONFIG RESETSTAT` (INFO stats' keyspace hits + misses): an MGET of n keys counts n. */
export async function keyLookups(redis: Redis): Promise<number> {
  const info = await redis.info('stats')
  const stat = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0)
  return stat('keyspace_hits') + stat('keyspace_misses')
}
