import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { toMember } from '../../src/index.js'
import { InteractionKeys } from '../../src/interactions/keys.js'
import { interactionReply, playScript } from '../../src/interactions/scripts.js'
import { playViewerHash } from '../../src/interactions/viewer.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// play-6.lua on its own, on an injected clock (ARGV[9]); the production path (TIME) is
// exercised through Interactions.recordPlay in toggle_lua.test.ts and play_dedupe.test.ts.
const redis = testRedisClient(10_000)
const prefix = uniquePrefix('ix-play-lua')
const keys = new InteractionKeys(prefix, 4)
/** Window W (ms): long in real time, so the keys of the fake generations outlive the test's steps. */
const W = 60_000
/** A generation boundary: generation G starts at T0. */
const G = 28_000_000
const T0 = G * W

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

async function play(
  item: string,
  viewer: string,
  nowMs: number | undefined,
  opts: { load?: number; hash?: string; windowMs?: number } = {},
) {
  const p = keys.partitionOf(item)
  const reply = await playScript.run(
    redis,
    [
      keys.playSeenPrefix(item),
      keys.plays(item),
      keys.rankAll(p, 'plays'),
      keys.rankMinutePrefix(p, 'plays'),
      keys.stream(p),
      keys.gone(item),
    ],
    [
      opts.windowMs ?? W,
      item,
      toMember(item),
      viewer,
      10,
      120_000,
      opts.hash ?? playViewerHash(viewer),
      opts.load ?? 128,
      ...(nowMs === undefined ? [] : [nowMs]),
    ],
  )
  return interactionReply(playScript, reply)
}

const counted = async (item: string, viewer: string, nowMs: number) =>
  (await play(item, viewer, nowMs)).changed

/** The bucket of a member as play-6.lua computes it (linear hashing on the hash's low bits). */
function bucketOf(member: string, buckets: number): number {
  const x = Number(member)
  let half = 1
  while (half * 2 <= buckets) half *= 2
  const b = x % (half * 2)
  return b >= buckets ? b - half : b
}

describe('play-6.lua: viewers in intset buckets per window generation', () => {
  it('counts a viewer once inside a generation and keeps no key per viewer', async () => {
    const now = T0 + 15_000
    const burst = await Promise.all(Array.from({ length: 20 }, () => play('1', 'u9', now)))
    expect(burst.filter((r) => r.changed)).toHaveLength(1)
    expect(burst.map((r) => r.count)).toEqual(Array(20).fill(1))
    expect(await counted('1', 'u10', now)).toBe(true)
    expect(await counted('2', 'u9', now)).toBe(true) // another item
    expect(await counted('1', 'u10', now + 1)).toBe(false)

    const at = `${keys.playSeenPrefix('1')}${G}:`
    expect(await redis.get(`${at}n`)).toBe('2')
    expect(await redis.exists(`${at}1`)).toBe(0) // one bucket up to T = 128 hashes
    expect((await redis.smembers(`${at}0`)).sort()).toEqual(
      [playViewerHash('u10'), playViewerHash('u9')].sort(),
    )
    expect(await redis.object('ENCODING', `${at}0`)).toBe('intset')
    // every key of generation G expires at the end of G + 1: 2W - 15 s from `now`
    for (const key of [`${at}n`, `${at}0`]) {
      const ttl = await redis.pttl(key)
      expect(ttl).toBeGreaterThan(2 * W - 15_000 - 5_000)
      expect(ttl).toBeLessThanOrEqual(2 * W - 15_000)
    }
    expect(await redis.xlen(keys.stream(keys.partitionOf('1')))).toBe(2)
  })

  it('catches a repeat in its generation and the next one, counts it two generations on (window W to 2W)', async () => {
    const item = '5'
    // counted in the last ms of generation G: caught through G + 1, counted from G + 2 (W + 1 ms later)
    expect(await counted(item, 'u1', T0 + W - 1)).toBe(true)
    expect(await counted(item, 'u1', T0 + W)).toBe(false)
    expect(await counted(item, 'u1', T0 + 2 * W - 1)).toBe(false)
    expect(await counted(item, 'u1', T0 + 2 * W)).toBe(true)
    // counted in the first ms of G: caught until the last ms of G + 1 (2W - 1 ms later)
    expect(await counted(item, 'u2', T0)).toBe(true)
    expect(await counted(item, 'u2', T0 + W - 1)).toBe(false)
    expect(await counted(item, 'u2', T0 + W + 5)).toBe(false) // a repeat: not added to G + 1 ...
    expect(await counted(item, 'u2', T0 + 2 * W - 1)).toBe(false)
    expect(await counted(item, 'u2', T0 + 2 * W)).toBe(true) // ... so it counts in G + 2
    expect(await counted(item, 'u2', T0 + 3 * W + 1)).toBe(false) // G + 3 sees G + 2's count
    // a viewer first seen in G + 1 counts there once
    expect(await counted(item, 'u3', T0 + W + 7)).toBe(true)
    expect(await counted(item, 'u3', T0 + 2 * W + 7)).toBe(false)
    expect((await play(item, 'u4', T0 + 2 * W + 8)).count).toBe(6)
  })

  it('splits buckets as viewers come: every viewer stays seen, in its bucket, every bucket an intset', async () => {
    const item = '9'
    const n = 2000
    const load = 4
    const viewers = Array.from({ length: n }, (_, i) => `u${i + 1}`)
    const now = T0 + 1000
    const first = await Promise.all(viewers.map((v) => play(item, v, now, { load })))
    expect(first.every((r) => r.changed)).toBe(true)
    expect(Math.max(...first.map((r) => r.count))).toBe(n)

    const at = `${keys.playSeenPrefix(item)}${G}:`
    expect(await redis.get(`${at}n`)).toBe(String(n))
    const buckets = n / load // ceil(n / T)
    expect(await redis.exists(`${at}${buckets}`)).toBe(0)
    let members = 0
    for (let b = 0; b < buckets; b++) {
      const key = `${at}${b}`
      const set = (await redis.smembers(key)).filter((m) => m !== '0')
      members += set.length
      for (const m of set) expect(bucketOf(m, buckets)).toBe(b)
      expect(await redis.object('ENCODING', key)).toBe('intset')
      expect(await redis.pttl(key)).toBeGreaterThan(0)
    }
    expect(members).toBe(n)

    // repeats in the same generation and in the next one (looked up through G's split table)
    const again = await Promise.all(viewers.map((v) => play(item, v, now + 5, { load })))
    expect(again.filter((r) => r.changed)).toHaveLength(0)
    const next = await Promise.all(viewers.map((v) => play(item, v, T0 + W + 3, { load })))
    expect(next.filter((r) => r.changed)).toHaveLength(0)
    expect(await redis.get(keys.plays(item))).toBe(String(n))
  })

  it('keeps the default load to intsets of at most a few hundred hashes', async () => {
    const item = '13'
    const n = 6000
    const viewers = Array.from({ length: n }, (_, i) => `a${(i + 1).toString(16).padStart(32, '0')}`)
    await Promise.all(viewers.map((v) => play(item, v, T0 + 2000)))
    const at = `${keys.playSeenPrefix(item)}${G}:`
    const buckets = Math.ceil(n / 128)
    expect(await redis.get(`${at}n`)).toBe(String(n))
    expect(await redis.exists(`${at}${buckets - 1}`, `${at}${buckets}`)).toBe(1)
    let largest = 0
    for (let b = 0; b < buckets; b++) {
      largest = Math.max(largest, await redis.scard(`${at}${b}`))
      expect(await redis.object('ENCODING', `${at}${b}`)).toBe('intset')
    }
    expect(largest).toBeLessThanOrEqual(400)
  })

  it('a split that leaves one half empty keeps that bucket with a placeholder and its TTL', async () => {
    const item = '17'
    const now = T0 + 100
    const at = `${keys.playSeenPrefix(item)}${G}:`
    // load 1: the second member splits bucket 0 (x mod 2): hashes 1 and 3 both move to bucket 1
    expect((await play(item, 'h1', now, { load: 1, hash: '1' })).changed).toBe(true)
    expect((await play(item, 'h3', now, { load: 1, hash: '3' })).changed).toBe(true)
    expect(await redis.smembers(`${at}0`)).toEqual(['0'])
    expect((await redis.smembers(`${at}1`)).sort()).toEqual(['1', '3'])
    // hash 2 lands in bucket 0 (2 mod 4 = 2 >= 2 buckets), whose split moves it to bucket 2
    expect((await play(item, 'h2', now, { load: 1, hash: '2' })).changed).toBe(true)
    expect(await redis.smembers(`${at}0`)).toEqual(['0'])
    expect(await redis.smembers(`${at}2`)).toEqual(['2'])
    // hash 4 lands in bucket 0 (4 mod 4); the split is bucket 1's: 3 (3 mod 4) moves to bucket 3
    expect((await play(item, 'h4', now, { load: 1, hash: '4' })).changed).toBe(true)
    expect(await redis.get(`${at}n`)).toBe('4')
    expect((await redis.smembers(`${at}0`)).sort()).toEqual(['0', '4'])
    expect(await redis.smembers(`${at}1`)).toEqual(['1'])
    expect(await redis.smembers(`${at}3`)).toEqual(['3'])
    for (let b = 0; b < 4; b++) expect(await redis.pttl(`${at}${b}`)).toBeGreaterThan(0)
    for (const [viewer, hash] of [
      ['h1', '1'],
      ['h2', '2'],
      ['h3', '3'],
      ['h4', '4'],
    ] as const) {
      expect((await play(item, viewer, now + 1, { load: 1, hash })).changed).toBe(false)
      expect((await play(item, viewer, now + W, { load: 1, hash })).changed).toBe(false)
    }
    expect(await redis.get(keys.plays(item))).toBe('4')
  })

  it("on Redis TIME, a generation's keys expire by themselves at the end of the next generation", async () => {
    const windowMs = 300
    const [seconds, micros] = await redis.time()
    const g = Math.floor((Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)) / windowMs)
    expect((await play('21', 'u1', undefined, { windowMs })).changed).toBe(true)
    expect((await play('21', 'u1', undefined, { windowMs })).changed).toBe(false)
    // the play ran in g, or in g + 1 if the clock moved on in between
    const at = [g, g + 1].map((x) => `${keys.playSeenPrefix('21')}${x}:`)
    let live = 0
    for (const a of at) live += await redis.exists(`${a}n`, `${a}0`)
    expect(live).toBe(2)
    for (const a of at) expect(await redis.pttl(`${a}n`)).toBeLessThanOrEqual(2 * windowMs)
    await sleep(2 * windowMs + 100)
    for (const a of at) expect(await redis.exists(`${a}n`, `${a}0`)).toBe(0)
    expect((await play('21', 'u1', undefined, { windowMs })).changed).toBe(true)
  })
})
