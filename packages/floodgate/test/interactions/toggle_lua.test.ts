import { afterAll, describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/errors/index.js'
import { Interactions, playViewer, playViewerHash } from '../../src/interactions/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('ix-lua')
const ix = new Interactions(redis, { prefix, partitions: 4, topK: 2, bucketTtlMs: 120_000 })
const k = ix.keys

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

async function minuteBucket(p: number, metric: 'likes' | 'plays'): Promise<string> {
  const [seconds] = await redis.time()
  return k.rankMinute(p, metric, Math.floor(Number(seconds) / 60))
}

describe('toggle-5.lua', () => {
  it('changes membership, ranking, bucket and appends one event only when the state changes', async () => {
    const first = await ix.setLiked('6', '42', true)
    expect(first).toMatchObject({ changed: true, active: true, count: 1 })
    expect(first.eventId).toMatch(/^\d+-\d+$/)
    const again = await ix.setLiked(6n, 42, true)
    expect(again).toEqual({ changed: false, active: true, count: 1, eventId: undefined })

    const p = k.partitionOf('6')
    expect(p).toBe(2)
    expect(await redis.smembers(k.likes('6'))).toEqual(['42'])
    expect(await redis.xlen(k.stream(p))).toBe(1)
    const [[id, fields]] = (await redis.xrange(k.stream(p), '-', '+')) as [[string, string[]]]
    expect(id).toBe(first.eventId)
    expect(fields.slice(0, 8)).toEqual(['k', 'like', 'v', '6', 'u', '42', 's', '1'])
    expect(fields[8]).toBe('t')
    expect(Math.abs(Number(fields[9]) - Number(id.split('-')[0]))).toBeLessThan(1000)
    expect(await redis.zscore(k.rankAll(p, 'likes'), '00000000000000000006')).toBe('1')
    const bucket = await minuteBucket(p, 'likes')
    expect(await redis.zscore(bucket, '00000000000000000006')).toBe('1')
    const ttl = await redis.pttl(bucket)
    expect(ttl).toBeGreaterThan(100_000)
    expect(ttl).toBeLessThanOrEqual(120_000)

    const off = await ix.setLiked('6', '42', false)
    expect(off).toMatchObject({ changed: true, active: false, count: 0 })
    expect(await redis.zscore(bucket, '00000000000000000006')).toBe('0')
    expect(await redis.zscore(k.rankAll(p, 'likes'), '00000000000000000006')).toBe('0')
    const entries = await redis.xrange(k.stream(p), '-', '+')
    expect(entries).toHaveLength(2)
    expect(entries[1]?.[1].slice(6, 8)).toEqual(['s', '0'])
    expect(await ix.setLiked('6', '42', false)).toMatchObject({ changed: false, count: 0 })
    expect(await redis.xlen(k.stream(p))).toBe(2)
  })

  it('keeps only the top K per partition in the all-time ranking', async () => {
    // videos 1, 5, 9, 13 all live in partition 1 of 4
    for (const [video, likers] of [
      ['1', 3],
      ['5', 1],
      ['9', 2],
      ['13', 4],
    ] as const) {
      for (let u = 1; u <= likers; u++) await ix.setLiked(video, u, true)
    }
    const top = await redis.zrevrange(k.rankAll(1, 'likes'), 0, -1, 'WITHSCORES')
    expect(top).toEqual(['00000000000000000013', '4', '00000000000000000001', '3'])
  })

  it('favourites change the set and the stream but no ranking', async () => {
    const before = await redis.zcard(k.rankAll(3, 'likes'))
    const r = await ix.setFavorited('3', '7', true)
    expect(r).toMatchObject({ changed: true, count: 1 })
    expect(await redis.sismember(k.favorites('3'), '7')).toBe(1)
    expect(await redis.zcard(k.rankAll(3, 'likes'))).toBe(before)
    const entries = await redis.xrange(k.stream(3), '-', '+')
    expect(entries.at(-1)?.[1].slice(0, 8)).toEqual(['k', 'favorite', 'v', '3', 'u', '7', 's', '1'])
  })

  it('rejects ids that are not positive bigint integers before touching Redis', async () => {
    for (const bad of ['0', '-1', '01', '1.5', 'x', '9223372036854775808', 2 ** 60]) {
      await expect(ix.setLiked(bad as string, '1', true)).rejects.toBeInstanceOf(InvalidArgumentError)
    }
    await expect(ix.setLiked('1', '', true)).rejects.toBeInstanceOf(InvalidArgumentError)
    await expect(ix.recordPlay('1', 'nobody')).rejects.toBeInstanceOf(InvalidArgumentError)
  })
})

describe('play-6.lua', () => {
  it('counts a viewer once inside the window and appends a play event', async () => {
    const viewer = playViewer({ ip: '203.0.113.9', userAgent: 'curl/8' })
    expect(viewer).toMatch(/^a[0-9a-f]{32}$/)
    const first = await ix.recordPlay('10', viewer)
    expect(first).toMatchObject({ counted: true, count: 1 })
    expect(await ix.recordPlay('10', viewer)).toEqual({ counted: false, count: 1, eventId: undefined })
    const p = k.partitionOf('10')
    // no key per viewer: its hash sits in bucket 0 of this generation (W = 600 s, Redis time),
    // whose keys live to the end of the next generation: between W and 2W
    const [seconds] = await redis.time()
    const at = `${k.playSeenPrefix('10')}${Math.floor(Number(seconds) / 600)}:`
    expect(await redis.smembers(`${at}0`)).toEqual([playViewerHash(viewer)])
    const pttl = await redis.pttl(`${at}n`)
    expect(pttl).toBeGreaterThan(590_000)
    expect(pttl).toBeLessThanOrEqual(1_200_000)
    const entries = await redis.xrange(k.stream(p), first.eventId!, first.eventId!)
    expect(entries[0]?.[1].slice(0, 6)).toEqual(['k', 'play', 'v', '10', 'w', viewer])
    expect(await redis.zscore(k.rankAll(p, 'plays'), '00000000000000000010')).toBe('1')
    expect(await redis.zscore(await minuteBucket(p, 'plays'), '00000000000000000010')).toBe('1')
    expect(await ix.recordPlay('10', playViewer({ userId: 5 }))).toMatchObject({ counted: true, count: 2 })
  })
})
