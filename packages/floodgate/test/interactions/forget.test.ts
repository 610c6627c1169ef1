import { afterAll, describe, expect, it } from 'vitest'
import { restoreMembersOf } from '../../src/counters/rebuild.js'
import { restorePlaysScript } from '../../src/counters/scripts.js'
import { PLAY_DEDUPE_DEFAULTS } from '../../src/interactions/defaults.js'
import {
  type InteractionKeys,
  Interactions,
  ItemGoneError,
  playViewer,
  readGeometry,
} from '../../src/interactions/index.js'
import { toMember } from '../../src/rankings/member.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// Interactions.forget: a deleted item's state leaves Redis (checked by the exact key names, not a
// SCAN of the shared Redis), and its tombstone keeps toggles and plays from bringing it back
const redis = testRedisClient(10_000)
const prefix = uniquePrefix('ix-forget')
const options = { partitions: 4, topK: 1000, bucketTtlMs: 600_000 }
const batched = new Interactions(redis, { ...options, prefix: `${prefix}:b` })
const single = new Interactions(redis, { ...options, prefix: `${prefix}:s`, maxEventsPerCall: 1 })

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

const users = (from: number, n: number) => Array.from({ length: n }, (_, i) => String(from + i))

/** Every key name the item could hold with up to `buckets` member buckets and seen buckets. */
async function itemKeyNames(keys: InteractionKeys, item: string, buckets: number): Promise<string[]> {
  const [seconds] = await redis.time()
  const g = Math.floor((Number(seconds) * 1000) / 600_000)
  const names = [keys.plays(item)]
  for (const kind of ['likes', 'favorites'] as const) {
    names.push(keys.memberMeta(kind, item))
    for (let i = 0; i < buckets; i++) names.push(keys.memberBucket(kind, item, i))
  }
  for (const generation of [g - 1, g]) {
    names.push(`${keys.playSeenPrefix(item)}${generation}:n`)
    for (let b = 0; b < buckets; b++) names.push(`${keys.playSeenPrefix(item)}${generation}:${b}`)
  }
  return names
}

/** Keys of `names` that exist, one EXISTS each (a cluster-safe pipeline of one slot's keys). */
async function existing(names: readonly string[]): Promise<string[]> {
  const replies = await Promise.all(names.map((k) => redis.exists(k)))
  return names.filter((_, i) => replies[i] === 1)
}

/** The item's scores in its partition's all-time ZSETs and the current minute's buckets. */
async function rankScores(keys: InteractionKeys, item: string): Promise<(string | null)[]> {
  const p = keys.partitionOf(item)
  const [seconds] = await redis.time()
  const minute = Math.floor(Number(seconds) / 60)
  const zsets = [keys.rankAll(p, 'likes'), keys.rankAll(p, 'plays')]
  for (const m of [minute - 1, minute])
    zsets.push(keys.rankMinute(p, 'likes', m), keys.rankMinute(p, 'plays', m))
  return Promise.all(zsets.map((z) => redis.zscore(z, toMember(item))))
}

describe.each([
  ['batched', batched],
  ['one call per event', single],
])('Interactions.forget (%s)', (_, ix) => {
  it('removes every key and ranking entry of the item; later toggles, plays and restores are refused', async () => {
    const keys = ix.keys
    const item = '7'
    await restoreMembersOf({ redis, keys, topK: 1000 }, 'likes', item, users(1_000_000, 3000), 'add')
    await Promise.all(users(5_000_000, 20).map((u) => ix.setLiked(item, u, true)))
    await Promise.all(users(6_000_000, 300).map((u) => ix.setFavorited(item, u, true)))
    await Promise.all(users(7_000_000, 400).map((u) => ix.recordPlay(item, playViewer({ userId: u }))))
    const likes = await readGeometry(redis, keys, 'likes', item)
    expect(likes.count).toBe(3020)
    expect(likes.buckets).toBeGreaterThan(20)
    const names = await itemKeyNames(keys, item, 64)
    const before = await existing(names)
    // likes' buckets and meta, favourites' 3 buckets (300 > 2 × 128) and meta, the play counter,
    // the seen-set's n and its ⌈400 / 128⌉ = 4 buckets
    const seenBuckets = Math.ceil(400 / PLAY_DEDUPE_DEFAULTS.bucketLoad)
    expect(before.length).toBe(likes.buckets + 1 + 3 + 1 + 1 + 1 + seenBuckets)
    expect((await rankScores(keys, item)).filter((s) => s !== null).length).toBe(4)

    const report = await ix.forget(item)
    expect(report.unlinked).toBe(before.length)
    expect(report.unranked).toBe(4)
    expect(await existing(names)).toEqual([])
    expect(await rankScores(keys, item)).toEqual([null, null, null, null, null, null])

    await expect(ix.setLiked(item, '1', true)).rejects.toBeInstanceOf(ItemGoneError)
    await expect(ix.setFavorited(item, '1', true)).rejects.toMatchObject({ code: 'FLOODGATE_ITEM_GONE' })
    await expect(ix.recordPlay(item, playViewer({ userId: '1' }))).rejects.toBeInstanceOf(ItemGoneError)
    expect(await existing(names)).toEqual([])
    expect(await rankScores(keys, item)).toEqual([null, null, null, null, null, null])
    // a recovery's restore of the item (the rebuild, restoreItem before a toggle) is refused too
    expect(
      await restoreMembersOf({ redis, keys, topK: 1000 }, 'likes', item, users(1_000_000, 300), 'merge'),
    ).toEqual({ restored: false, count: 0 })
    const p = keys.partitionOf(item)
    const plays = await restorePlaysScript.run(
      redis,
      [keys.plays(item), keys.rankAll(p, 'plays'), keys.gone(item)],
      [toMember(item), 400, 1000, 'merge'],
    )
    expect(plays).toBe(0)
    expect(await existing(names)).toEqual([])
    expect(await rankScores(keys, item)).toEqual([null, null, null, null, null, null])
    // idempotent
    expect(await ix.forget(item)).toEqual({ unlinked: 0, unranked: 0 })
  }, 30_000)

  it('a forgotten item in a batch refuses only its own events', async () => {
    const keys = ix.keys
    await expect(ix.forget('11', { tombstoneTtlMs: 5 })).rejects.toMatchObject({
      code: 'FLOODGATE_INVALID_ARGUMENT',
    })
    expect(await redis.exists(keys.gone('11'))).toBe(0)
    await ix.forget('11')
    // 11 and 15 share partition 3 (mod 4): one batch call holds both
    const [gone, live, play] = await Promise.allSettled([
      ix.setLiked('11', '1', true),
      ix.setLiked('15', '1', true),
      ix.recordPlay('11', playViewer({ userId: '2' })),
    ])
    expect(gone).toMatchObject({ status: 'rejected', reason: { itemId: '11' } })
    expect(live).toMatchObject({ status: 'fulfilled', value: { changed: true, count: 1 } })
    expect(play).toMatchObject({ status: 'rejected', reason: { itemId: '11' } })
    expect(await existing(await itemKeyNames(keys, '11', 4))).toEqual([])
  })

  it('toggles racing the walk: each either ran before the tombstone or is refused, and no key comes back', async () => {
    const keys = ix.keys
    const item = '9'
    await restoreMembersOf({ redis, keys, topK: 1000 }, 'likes', item, users(1_000_000, 2000), 'add')
    const likers = users(2_000_000, 2000)
    const calls = likers.map(
      (u, i) =>
        new Promise<ReturnType<typeof ix.setLiked>>((resolve) =>
          setTimeout(() => resolve(ix.setLiked(item, u, i % 2 === 0)), i % 50),
        ),
    )
    const walk = new Promise((resolve) => setTimeout(resolve, 20)).then(() => ix.forget(item))
    const settled = await Promise.allSettled(calls.map((c) => c.then((r) => r)))
    await walk
    const refused = settled.filter((s) => s.status === 'rejected')
    for (const s of refused) expect((s as PromiseRejectedResult).reason).toBeInstanceOf(ItemGoneError)
    expect(refused.length).toBeGreaterThan(0)
    expect(refused.length).toBeLessThan(likers.length)
    // at most 4,000 likers: ≤ 64 buckets of ~128
    expect(await existing(await itemKeyNames(keys, item, 64))).toEqual([])
    await expect(ix.setLiked(item, '1', true)).rejects.toBeInstanceOf(ItemGoneError)
    expect(await existing(await itemKeyNames(keys, item, 64))).toEqual([])
  }, 30_000)
})
