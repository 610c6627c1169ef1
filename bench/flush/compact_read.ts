/**
 * The compact read against the plain one on a private redis-server (so INFO commandstats counts
 * only this run): Redis CPU per entry (the commands' own `usec`, scripts included) and this
 * process's CPU per entry (sending, decoding, building the entries), same events, same counts.
 *
 *   node --conditions=floodgate-source --import tsx bench/flush/compact_read.ts [entries]
 */
import { PrivateRedis } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { readGroupEach, readGroupEachCompact } from '../../packages/floodgate/src/stream/group_commands.js'

const ENTRIES = Number(process.argv[2] ?? 60_000)
/** 300 partitions and a batch of 5,000: about 17 entries per stream per read, as the flush reads. */
const STREAMS = 300
const COUNT = 17

/** The `usec` of `command` in INFO commandstats: a script's includes the commands it calls. */
async function usecOf(redis: Redis, command: string): Promise<number> {
  const info = (await redis.info('commandstats')) as string
  return Number(new RegExp(`^cmdstat_${command}:calls=\\d+,usec=(\\d+)`, 'm').exec(info)?.[1] ?? 0)
}

const server = await PrivateRedis.start()
const redis = new Redis(server.url)
const streams = Array.from({ length: STREAMS }, (_, i) => `b:{p${i}}:stream`)
const result: Record<string, { redisUsPerEntry: number; nodeUsPerEntry: number }> = {}
for (const mode of ['plain', 'compact', 'plain', 'compact'] as const) {
  await redis.flushall()
  let pipe = redis.pipeline()
  for (let i = 0; i < ENTRIES; i++) {
    pipe.xadd(
      streams[i % STREAMS]!,
      '*',
      'k',
      'like',
      'v',
      String(i % 10_000),
      'u',
      String(i),
      's',
      '1',
      't',
      '1796378359577',
    )
    if (i % 2000 === 1999) {
      await pipe.exec()
      pipe = redis.pipeline()
    }
  }
  await pipe.exec()
  for (const s of streams) await redis.xgroup('CREATE', s, 'g', '0')
  await redis.config('RESETSTAT')
  const cpu = process.cpuUsage()
  let read = 0
  const fn = mode === 'plain' ? readGroupEach : readGroupEachCompact
  for (;;) {
    const got = (await fn(redis, 'g', 'c', streams, COUNT)).reduce((n, e) => n + e.length, 0)
    if (got === 0) break
    read += got
  }
  const used = process.cpuUsage(cpu)
  const usec = await usecOf(redis, mode === 'plain' ? 'xreadgroup' : 'evalsha')
  if (read !== ENTRIES) throw new Error(`${mode}: read ${read} of ${ENTRIES}`)
  result[`${mode}${result[mode] ? ' 2' : ''}`] = {
    redisUsPerEntry: +(usec / ENTRIES).toFixed(2),
    nodeUsPerEntry: +((used.user + used.system) / ENTRIES).toFixed(2),
  }
}
console.log(JSON.stringify(result, null, 1))
redis.disconnect()
await server.destroy()
