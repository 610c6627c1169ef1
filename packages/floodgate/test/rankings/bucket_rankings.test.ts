import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { createRankings, InvalidArgumentError, toMember } from '../../src/index.js'
import { InteractionKeys } from '../../src/interactions/keys.js'
import { windowTopKeys } from '../../src/rankings/ranking_keys.js'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, testRedis, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('rank')
const P = 4
const keys = new InteractionKeys(prefix, P)

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

beforeEach(async () => {
  await deleteByPrefix(redis, prefix)
})

async function redisMinute(): Promise<number> {
  const [s] = await redis.time()
  return Math.floor(Number(s) / 60)
}

/** Seeds per the shared layout: all-time ZADD count. */
async function seedAll(metric: 'likes' | 'plays', counts: Record<string, number>) {
  for (const [id, n] of Object.entries(counts)) {
    await redis.zadd(keys.rankAll(keys.partitionOf(id), metric), n, toMember(id))
  }
}

/** Seeds a minute bucket `ageMinutes` old (ZINCRBY as the write path does). */
async function seedBucket(metric: 'likes' | 'plays', ageMinutes: number, counts: Record<string, number>) {
  const minute = (await redisMinute()) - ageMinutes
  for (const [id, n] of Object.entries(counts)) {
    const key = keys.rankMinute(keys.partitionOf(id), metric, minute)
    await redis.zincrby(key, n, toMember(id))
    await redis.pexpire(key, 87_000_000)
  }
}

describe('all-time rankings', () => {
  it('shares one read among concurrent identical queries (one command per partition, not per call)', async () => {
    await seedAll('likes', { '3': 8, '4': 1 })
    let zrevranges = 0
    const counting = new Proxy(redis, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver)
        if (name !== 'pipeline' || typeof value !== 'function') return value
        return (...args: unknown[]) => {
          const pipe = value.apply(target, args)
          const zrevrange = pipe.zrevrange.bind(pipe)
          pipe.zrevrange = (...a: unknown[]) => {
            zrevranges++
            return (zrevrange as (...x: unknown[]) => unknown)(...a)
          }
          return pipe
        }
      },
    })
    const rankings = createRankings({ redis: counting, prefix, partitions: P })
    const query = { metric: 'likes', window: 'all', limit: 10 } as const
    const answers = await Promise.all(Array.from({ length: 50 }, () => rankings.top(query)))
    for (const a of answers) expect(a.map((e) => e.itemId)).toEqual(['3', '4'])
    expect(zrevranges).toBe(P)
    // a read after those settled reads again (no staleness beyond one read in flight)
    await redis.zadd(keys.rankAll(keys.partitionOf('5'), 'likes'), 9, toMember('5'))
    expect((await rankings.top(query)).map((e) => e.itemId)).toEqual(['5', '3', '4'])
  })

  it('merges partitions in score order, ties newer (higher id) first, numerically', async () => {
    // 9 and 10 tie; 10 is newer and must rank first even though "9" > "10" as strings.
    await seedAll('likes', { '9': 5, '10': 5, '3': 8, '4': 1, '12': 5, '7': 0 })
    const rankings = createRankings({ redis, prefix, partitions: P })
    const top = await rankings.top({ metric: 'likes', window: 'all', limit: 10 })
    expect(top.map((e) => e.itemId)).toEqual(['3', '12', '10', '9', '4'])
    expect(top[0]).toEqual({ itemId: '3', score: 8 })
    const top2 = await rankings.top({ metric: 'likes', window: 'all', limit: 2 })
    expect(top2.map((e) => e.itemId)).toEqual(['3', '12'])
  })

  it('rejects unknown metrics, windows and limits above topK', async () => {
    const rankings = createRankings({ redis, prefix, partitions: P, topK: 10 })
    await expect(rankings.top({ metric: 'likes', window: '7d', limit: 5 })).rejects.toThrow(
      InvalidArgumentError,
    )
    await expect(rankings.top({ metric: 'likes', window: 'all', limit: 11 })).rejects.toThrow(
      InvalidArgumentError,
    )
    await expect(rankings.top({ metric: 'shares' as 'likes', window: 'all', limit: 1 })).rejects.toThrow(
      InvalidArgumentError,
    )
    expect(() => createRankings({ redis, prefix, windows: { all: { windowMs: 60_000 } } })).toThrow(
      InvalidArgumentError,
    )
    expect(() => createRankings({ redis, prefix, windows: { x: { windowMs: 90_000 } } })).toThrow(
      InvalidArgumentError,
    )
  })
})

describe('trending windows (minute buckets)', () => {
  it('weights recent minutes more, and buckets older than the window drop out', async () => {
    // 1h window, half-life 15 min: video 1 has 4 plays 30 min ago (weight 1/4 → 1),
    // video 2 has 2 plays now (2), video 3 has 100 plays 61 min ago (outside 1h, inside 24h).
    await seedBucket('plays', 30, { '1': 4 })
    await seedBucket('plays', 0, { '2': 2 })
    await seedBucket('plays', 61, { '3': 100 })
    const rankings = createRankings({ redis, prefix, partitions: P })
    const hour = await rankings.top({ metric: 'plays', window: '1h', limit: 10 })
    expect(hour.map((e) => e.itemId)).toEqual(['2', '1'])
    expect(hour[0]!.score).toBeCloseTo(2, 1)
    expect(hour[1]!.score).toBeCloseTo(1, 1)
    const day = await rankings.top({ metric: 'plays', window: '24h', limit: 10 })
    // 24 h window, half-life 6 h: 4 plays 30 min ago ≈ 3.77 now outweigh 2 plays this minute.
    expect(day.map((e) => e.itemId)).toEqual(['3', '1', '2'])
    expect(day[1]!.score).toBeCloseTo(4 * 2 ** (-30 / 360), 6)
  })

  it('breaks ties newer first and leaves out videos whose unlikes outweigh their likes', async () => {
    await seedBucket('likes', 0, { '9': 3, '10': 3, '11': 1 })
    await seedBucket('likes', 0, { '11': -1 })
    const rankings = createRankings({ redis, prefix, partitions: P })
    const top = await rankings.top({ metric: 'likes', window: '1h', limit: 10 })
    expect(top.map((e) => e.itemId)).toEqual(['10', '9'])
  })

  it('refuses a half-life under 1 ms when built, not at the first top()', () => {
    for (const halfLifeMs of [5e-324, 1e-300, 0.5, Number.NaN, -1]) {
      expect(() =>
        createRankings({ redis, prefix, windows: { '1h': { windowMs: 3_600_000, halfLifeMs } } }),
      ).toThrow(InvalidArgumentError)
    }
    expect(() =>
      createRankings({ redis, prefix, windows: { '1h': { windowMs: 3_600_000, halfLifeMs: 1 } } }),
    ).not.toThrow()
  })

  it('leaves out members with a non-finite score (a foreign write) and counts them', async () => {
    await seedBucket('plays', 0, { '1': 2, '2': 1 })
    const minute = await redisMinute()
    await redis.zadd(keys.rankMinute(keys.partitionOf('3'), 'plays', minute), '-inf', toMember('3'))
    await redis.zadd(keys.rankMinute(keys.partitionOf('4'), 'plays', minute - 1), 'inf', toMember('4'))
    await redis.zadd(keys.rankAll(keys.partitionOf('5'), 'plays'), '-inf', toMember('5'))
    await seedAll('plays', { '6': 3 })
    const rankings = createRankings({ redis, prefix, partitions: P })
    const hour = await rankings.top({ metric: 'plays', window: '1h', limit: 10 })
    expect(hour.map((e) => e.itemId)).toEqual(['1', '2'])
    expect(rankings.stats.corruptScores).toBe(2)
    const all = await rankings.top({ metric: 'plays', window: 'all', limit: 10 })
    expect(all.map((e) => e.itemId)).toEqual(['6'])
    expect(rankings.stats.corruptScores).toBe(3)
  })

  it('serves the cached result until it expires, then the stale one while it recomputes behind', async () => {
    await seedBucket('plays', 0, { '1': 1 })
    const rankings = createRankings({ redis, prefix, partitions: P, cacheTtlMs: 300 })
    expect((await rankings.top({ metric: 'plays', window: '1h', limit: 5 })).map((e) => e.itemId)).toEqual([
      '1',
    ])
    expect(rankings.stats.recomputes).toBe(1)
    await seedBucket('plays', 0, { '2': 5 })
    // Still inside the cache period: the old result.
    expect((await rankings.top({ metric: 'plays', window: '1h', limit: 5 })).map((e) => e.itemId)).toEqual([
      '1',
    ])
    expect(rankings.stats.recomputes).toBe(1)
    await sleep(400)
    // Expired: this reader is elected, answers with the stale result at once and recomputes behind.
    const staleBefore = rankings.stats.staleServed
    expect((await rankings.top({ metric: 'plays', window: '1h', limit: 5 })).map((e) => e.itemId)).toEqual([
      '1',
    ])
    expect(rankings.stats.staleServed).toBe(staleBefore + 1)
    await until(() => rankings.stats.recomputes === 2, { what: 'the recompute behind' })
    expect((await rankings.top({ metric: 'plays', window: '1h', limit: 5 })).map((e) => e.itemId)).toEqual([
      '2',
      '1',
    ])
    // One shared merged result for all partitions, with a TTL; no scratch key left behind.
    expect(await redis.pttl(windowTopKeys(keys, 'plays', '1h', 5).value)).toBeGreaterThan(0)
    // one EXISTS per key: the partitions sit in different slots on a cluster
    for (const p of keys.allPartitions())
      expect(await redis.exists(`${keys.rankMinutePrefix(p, 'plays')}merge`)).toBe(0)
  })

  it('a window may keep its merged result fresh longer than the default (24 h: once a minute)', async () => {
    await seedBucket('likes', 0, { '1': 1 })
    const rankings = createRankings({ redis, prefix, partitions: P, cacheTtlMs: 200 })
    await rankings.top({ metric: 'likes', window: '24h', limit: 5 })
    expect(await redis.pttl(windowTopKeys(keys, 'likes', '24h', 5).lock)).toBeGreaterThan(50_000)
    await rankings.top({ metric: 'likes', window: '1h', limit: 5 })
    expect(await redis.pttl(windowTopKeys(keys, 'likes', '1h', 5).lock)).toBeLessThanOrEqual(200)
    expect(() =>
      createRankings({ redis, prefix, windows: { x: { windowMs: 60_000, cacheTtlMs: 0 } } }),
    ).toThrow(InvalidArgumentError)
  })

  it('a cached trending read is one round trip of three commands, whatever the partitions', async () => {
    // on the single node even in the cluster run: MONITOR watches one server
    const single = testRedis()
    const wide = new InteractionKeys(prefix, 300)
    const [seconds] = await single.time()
    const minute = Math.floor(Number(seconds) / 60)
    for (let id = 1; id <= 600; id++) {
      await single.zincrby(
        wide.rankMinute(wide.partitionOf(String(id)), 'plays', minute),
        id,
        toMember(String(id)),
      )
    }
    // fresh for 60 s: a recompute slowed by a loaded box must not expire the result mid-test
    const rankings = createRankings({ redis: single, prefix, partitions: 300, cacheTtlMs: 60_000 })
    const first = await rankings.top({ metric: 'plays', window: '1h', limit: 10 })
    expect(first.map((e) => e.itemId)).toEqual(Array.from({ length: 10 }, (_, i) => String(600 - i)))
    const watcher = testRedis()
    const monitor = await watcher.monitor()
    let counting = true
    const seen: string[] = []
    let sentinelSeen = false
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'echo' && args[1] === `${prefix}:done`) sentinelSeen = true
      else if (counting && args.some((a) => a.startsWith(prefix))) seen.push(args[0]!.toLowerCase())
    })
    try {
      expect(await rankings.top({ metric: 'plays', window: '1h', limit: 10 })).toEqual(first)
      // MONITOR lines arrive after the replies, in order: wait for a command sent after the read's
      await single.echo(`${prefix}:done`)
      await until(() => sentinelSeen, { timeoutMs: 10_000, what: 'the MONITOR line of the sentinel' })
    } finally {
      counting = false
      monitor.disconnect()
      watcher.disconnect()
      await deleteByPrefix(single, prefix)
      single.disconnect()
    }
    // the lock probe (SET NX), the lock's state and the merged result: 4 × 300 probes before
    expect(seen.sort()).toEqual(['get', 'get', 'set'])
  })

  it('one recompute across several processes querying at once', async () => {
    const ids: Record<string, number> = {}
    for (let i = 1; i <= 40; i++) ids[String(i)] = i
    await seedBucket('plays', 0, ids)
    const startAt = Date.now() + 1500
    const workers = [0, 1, 2].map(() =>
      spawnWorker(new URL('./workers/window_query_worker.ts', import.meta.url), [
        prefix,
        String(P),
        String(startAt),
        '5',
      ]),
    )
    const done = (await Promise.all(
      workers.map((w) => w.waitFor((m) => (m as { done?: boolean }).done === true, 20_000)),
    )) as { results: { itemId: string }[][]; stats: { recomputes: number; privateComputes: number } }[]
    await Promise.all(workers.map((w) => w.exited))
    const recomputes = done.reduce((sum, d) => sum + d.stats.recomputes, 0)
    expect(recomputes).toBe(1)
    expect(done.reduce((sum, d) => sum + d.stats.privateComputes, 0)).toBe(0)
    const expected = Array.from({ length: 10 }, (_, i) => String(40 - i))
    for (const d of done) for (const r of d.results) expect(r.map((e) => e.itemId)).toEqual(expected)
  })
})
