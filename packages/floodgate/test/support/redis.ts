import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { floodgateRedisOptions } from '../../src/redis/index.js'

/** URL of the shared Redis the integration tests use. */
export const TEST_REDIS_URL = process.env.FLOODGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** A fresh key prefix per test file, so runs never see each other's keys. */
export function uniquePrefix(label: string): string {
  return `fgtest:${label}:${process.pid}:${randomBytes(4).toString('hex')}`
}

/**
 * A client with floodgate's production options (offline queue off), except a
 * roomier command timeout so a loaded CI machine does not make tests flaky.
 */
export function testRedis(commandTimeoutMs = 2000): Redis {
  return new Redis(TEST_REDIS_URL, {
    ...floodgateRedisOptions({ commandTimeoutMs }),
    enableOfflineQueue: true,
  })
}

/** Deletes every key under `prefix` (SCAN, never KEYS). */
export async function deleteByPrefix(client: Redis, prefix: string): Promise<number> {
  let cursor = '0'
  let deleted = 0
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
    cursor = next
    if (keys.length > 0) deleted += await client.unlink(...keys)
  } while (cursor !== '0')
  return deleted
}
