import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Interactions, playViewer } from '../../src/interactions/index.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// The write scripts' ranking work on the hot shard: once an item is ranked and in this minute's
// bucket, a like or play of it neither checks the all-time ZSET's size (ZCARD) nor re-arms the
// bucket's TTL (PEXPIRE). Commands counted by INFO commandstats, so on a private redis-server.
let server: PrivateRedis
let redis: Redis

beforeAll(async () => {
  server = await PrivateRedis.start()
  redis = await privateRedisClient(server)
}, 30_000)

afterAll(async () => {
  redis?.disconnect()
  await server?.destroy()
})

/** Calls of `command` since the last CONFIG RESETSTAT (0 when it did not run). */
async function calls(command: string): Promise<number> {
  const stats = await redis.info('commandstats')
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(stats)?.[1] ?? 0)
}

const minuteNow = async () => Math.floor(Number((await redis.time())[0]) / 60)

/**
 * Runs `warm` (the item enters the rankings), resets the stats, runs `again` and returns the
 * ZCARD and PEXPIRE calls `again` made; repeated when a minute boundary fell in between (a new
 * bucket is armed then, rightly).
 */
async function rankingChecks(warm: () => Promise<unknown>, again: () => Promise<unknown>) {
  for (;;) {
    const minute = await minuteNow()
    await warm()
    await redis.config('RESETSTAT')
    await again()
    const counted = {
      zcard: await calls('zcard'),
      pexpire: await calls('pexpire'),
      evalsha: await calls('evalsha'),
    }
    if ((await minuteNow()) === minute) return counted
  }
}

describe('ranking work of an item already ranked this minute', () => {
  it('a like through toggle-5.lua runs no ZCARD and no PEXPIRE', async () => {
    const ix = new Interactions(redis, { prefix: 'rc1', partitions: 4, maxEventsPerCall: 1 })
    let user = 0
    const checks = await rankingChecks(
      () => ix.setLiked('6', String(++user), true),
      () => ix.setLiked('6', String(++user), true),
    )
    expect(checks).toEqual({ zcard: 0, pexpire: 0, evalsha: 1 })
  })

  it('a batch of likes through toggle-batch-n.lua runs no ZCARD and no PEXPIRE', async () => {
    const ix = new Interactions(redis, { prefix: 'rc2', partitions: 4 })
    let user = 0
    const likes = () => Promise.all([1, 2, 3].map(() => ix.setLiked('6', String(++user), true)))
    const checks = await rankingChecks(likes, likes)
    expect(checks).toEqual({ zcard: 0, pexpire: 0, evalsha: 1 })
  })

  it('a batch of plays through play-batch-n.lua runs no ZCARD and no PEXPIRE of the bucket', async () => {
    const ix = new Interactions(redis, { prefix: 'rc3', partitions: 4 })
    let viewer = 0
    // repeat viewers of the first batch: the generation's seen-set keys exist, only the rankings move
    const plays = () =>
      Promise.all([1, 2, 3].map(() => ix.recordPlay('6', playViewer({ userId: String(++viewer) }))))
    const checks = await rankingChecks(plays, plays)
    expect(checks).toEqual({ zcard: 0, pexpire: 0, evalsha: 1 })
  })

  it('a new item still trims the all-time ZSET to top K and arms the bucket', async () => {
    const ix = new Interactions(redis, { prefix: 'rc4', partitions: 1, topK: 2, bucketTtlMs: 120_000 })
    for (const item of ['1', '2', '3']) await ix.setLiked(item, '9', true)
    await Promise.all(['4', '5'].map((item) => ix.setLiked(item, '9', true)))
    expect(await redis.zcard(ix.keys.rankAll(0, 'likes'))).toBe(2)
    const bucket = ix.keys.rankMinute(0, 'likes', await minuteNow())
    expect(await redis.pttl(bucket)).toBeGreaterThan(60_000)
  })
})
