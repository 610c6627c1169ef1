import { afterAll, describe, expect, it } from 'vitest'
import {
  DecayedRankings,
  decayRatePerMs,
  InvalidArgumentError,
  LuaScript,
  StoreUnavailableError,
  toMember,
} from '../../src/index.js'
import { InteractionKeys } from '../../src/interactions/keys.js'
import { decayedKey } from '../../src/rankings/ranking_keys.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('decay')
const keys = new InteractionKeys(prefix, 2)
const script = new LuaScript(new URL('../../src/rankings/lua/decay-add-1.lua', import.meta.url))

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('decay-add-1.lua', () => {
  it('accumulates in log space: n events at about the same time score λt + ln n', async () => {
    const key = decayedKey(keys, 0, 'plays', 'lua')
    const lambda = decayRatePerMs(3_600_000)
    const origin = Date.now() - 1000
    let last = 0
    for (let i = 0; i < 4; i++)
      last = Number(await script.run(redis, [key], [toMember('2'), lambda, origin, 10]))
    const [s] = await redis.time()
    const approxT = Number(s) * 1000 - origin
    expect(last).toBeGreaterThan(lambda * (approxT - 2000) + Math.log(4) - 1e-6)
    expect(last).toBeLessThan(lambda * (approxT + 2000) + Math.log(4) + 1e-6)
    expect(Number(await redis.zscore(key, toMember('2')))).toBeCloseTo(last, 9)
  })

  it('trims to K entries, dropping the lowest', async () => {
    const key = decayedKey(keys, 0, 'plays', 'trim')
    for (const id of ['1', '2', '3']) await script.run(redis, [key], [toMember(id), 1e-6, 0, 2])
    await script.run(redis, [key], [toMember('3'), 1e-6, 0, 2])
    expect(await redis.zcard(key)).toBe(2)
    expect(await redis.zrevrange(key, 0, 0)).toEqual([toMember('3')])
  })

  it('never writes a non-finite score', async () => {
    const key = decayedKey(keys, 0, 'plays', 'inf')
    await expect(script.run(redis, [key], [toMember('1'), 1e308, 0, 10])).rejects.toThrow(
      StoreUnavailableError,
    )
    expect(await redis.exists(key)).toBe(0)
    await redis.zadd(key, 'inf', toMember('2'))
    await expect(script.run(redis, [key], [toMember('2'), 1e-6, 0, 10])).rejects.toThrow(/non-finite/)
    expect(await redis.zscore(key, toMember('2'))).toBe('inf')
  })
})

/** Decayed rankings over 2 partitions with one 1 h window (half-life 15 min). */
const hourRankings = (keyPrefix: string, originMs?: number) =>
  new DecayedRankings({
    redis,
    prefix: keyPrefix,
    partitions: 2,
    windows: { '1h': { windowMs: 3_600_000 } },
    ...(originMs === undefined ? {} : { originMs }),
  })

describe('DecayedRankings', () => {
  it('ranks by decayed count, ties newer first, across partitions', async () => {
    const rankings = hourRankings(prefix)
    for (let i = 0; i < 3; i++) await rankings.record('5', 'likes')
    await rankings.record('8', 'likes')
    await rankings.record('8', 'likes')
    await rankings.record('1', 'likes')
    const top = await rankings.top({ metric: 'likes', window: '1h', limit: 10 })
    expect(top.map((e) => e.itemId)).toEqual(['5', '8', '1'])
    // Half-life 15 min: seconds-old events keep nearly full weight.
    expect(top[0]!.score).toBeGreaterThan(2.99)
    expect(top[0]!.score).toBeLessThanOrEqual(3.0001)
  })

  it('keeps events older than originMs: the decayed count, not the log-space score, must be > 0', async () => {
    // every event lands before the origin: log-space scores < 0
    const rankings = hourRankings(`${prefix}:origin`, Date.now() + 60_000)
    await rankings.record('5', 'likes')
    await rankings.record('6', 'likes')
    await rankings.record('6', 'likes')
    const top = await rankings.top({ metric: 'likes', window: '1h', limit: 10 })
    expect(top.map((e) => e.itemId)).toEqual(['6', '5'])
    expect(top[1]!.score).toBeCloseTo(1, 2)
  })

  it('refuses a half-life under 1 ms when built, not as an outage at record()', () => {
    for (const halfLifeMs of [1e-300, 5e-324, 0.5]) {
      expect(
        () => new DecayedRankings({ redis, prefix, windows: { '1h': { windowMs: 3_600_000, halfLifeMs } } }),
      ).toThrow(InvalidArgumentError)
    }
  })

  it('leaves out a member whose stored score is not finite and counts it', async () => {
    const rankings = hourRankings(`${prefix}:corrupt`)
    await rankings.record('7', 'plays')
    const foreign = new InteractionKeys(`${prefix}:corrupt`, 2)
    await redis.zadd(decayedKey(foreign, 0, 'plays', '1h'), '-inf', toMember('8'))
    await redis.zadd(decayedKey(foreign, 1, 'plays', '1h'), 'inf', toMember('9'))
    const top = await rankings.top({ metric: 'plays', window: '1h', limit: 10 })
    expect(top.map((e) => e.itemId)).toEqual(['7'])
    expect(rankings.stats.corruptScores).toBe(2)
  })
})
