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
