import { afterAll, describe, expect, it } from 'vitest'
import { restoreMembersOf } from '../../src/counters/rebuild.js'
import { MEMBER_BUCKET_DEFAULTS } from '../../src/interactions/defaults.js'
import { Interactions } from '../../src/interactions/index.js'
import {
  bucketKeys,
  bucketOf,
  countMembers,
  dropMembers,
  memberHash,
  readGeometry,
  readMembers,
} from '../../src/interactions/member_buckets.js'
import { memberFlagsScript } from '../../src/interactions/scripts.js'
import { prng } from '../support/prng.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient(10_000)
const prefix = uniquePrefix('ix-buckets')
const ix = new Interactions(redis, { prefix, partitions: 4, topK: 10, bucketTtlMs: 120_000 })
const k = ix.keys
const LOAD = MEMBER_BUCKET_DEFAULTS.bucketLoad

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

/** Likes `users` of `item` (16 in flight). */
async function likeAll(item: string, users: readonly string[]): Promise<void> {
  for (let i = 0; i < users.length; i += 16)
    await Promise.all(users.slice(i, i + 16).map((u) => ix.setLiked(item, u, true)))
}

/** Every bucket: an intset under set-max-intset-entries, each member where its hash says. */
async function expectWellFormed(item: string, kind: 'likes' | 'favorites' = 'likes'): Promise<number> {
  const geometry = await readGeometry(redis, k, kind, item)
  let held = 0
  for (const [i, key] of bucketKeys(k, kind, item, geometry).entries()) {
    const members = await redis.smembers(key)
    held += members.length
    if (members.length > 0) expect(await redis.object('ENCODING', key)).toBe('intset')
    expect(members.length).toBeLessThan(512)
    for (const m of members) expect(bucketOf(memberHash(m), geometry.level, geometry.split)).toBe(i)
  }
  return held
}

describe('member buckets (toggle-5.lua, includes/member-buckets.lua)', () => {
  it('a small item stays one SET and no meta; the like past 2 × load makes 3 buckets', async () => {
    const small = 2 * LOAD
    const users = Array.from({ length: small }, (_, i) => String(i + 1))
    await likeAll('5', users)
    expect(await redis.exists(k.memberMeta('likes', '5'))).toBe(0)
    expect(await redis.scard(k.likes('5'))).toBe(small)
    expect(await redis.object('ENCODING', k.likes('5'))).toBe('intset')
    const next = await ix.setLiked('5', String(small + 1), true)
    expect(next).toMatchObject({ changed: true, count: small + 1 })
    expect(await redis.hgetall(k.memberMeta('likes', '5'))).toEqual({ n: String(small + 1), l: '1', s: '1' })
    const sizes = await Promise.all([0, 1, 2].map((i) => redis.scard(k.memberBucket('likes', '5', i))))
    expect(sizes[0]! + sizes[1]! + sizes[2]!).toBe(small + 1)
    expect(Math.min(...sizes)).toBeGreaterThan(20) // the hash spreads ids 1…257 over all three
    expect(await expectWellFormed('5')).toBe(small + 1)
    // an unlike in a bucketed item: exact count, no merge
    expect(await ix.setLiked('5', '1', false)).toMatchObject({ changed: true, count: small })
    expect(await ix.setLiked('5', '1', false)).toMatchObject({ changed: false, count: small })
  })

  it('membership and count stay exact across many splits, 8-byte ids, every bucket an intset', async () => {
    const users = Array.from({ length: 5000 }, (_, i) => String(9_000_000_000_000_000n + BigInt(i * 7919)))
    await likeAll('9', users)
    const geometry = await readGeometry(redis, k, 'likes', '9')
    expect(geometry.count).toBe(5000)
    expect(geometry.buckets).toBeGreaterThanOrEqual(Math.floor(5000 / LOAD))
    expect(geometry.buckets).toBeLessThanOrEqual(Math.ceil(5000 / LOAD) + 1)
    expect(await expectWellFormed('9')).toBe(5000)
    expect((await readMembers(redis, k, 'likes', '9')).sort()).toEqual([...users].sort())
    expect(await countMembers(redis, k, 'likes', ['9', '404'])).toEqual([
      { counted: 5000, held: 5000 },
      { counted: 0, held: 0 },
    ])
    const flags = await Promise.all(
      [users[0]!, users[4999]!, users[2500]!, '1', '9000000000000000001'].map((u) =>
        memberFlagsScript.run(redis, [k.likes('9'), k.favorites('9')], [u]),
      ),
    )
    expect(flags).toEqual([
      [1, 0],
      [1, 0],
      [1, 0],
      [0, 0],
      [0, 0],
    ])
  })

  it('property: random likes and unlikes answer like a JS Set, step by step', async () => {
    for (const seed of [1, 2]) {
      const random = prng(seed)
      const item = String(100 + seed)
      const model = new Set<string>()
      for (let op = 0; op < 2500; op++) {
        const user = String(1 + Math.floor(random() * 900))
        const on = random() < 0.65
        const kind = random() < 0.8 ? 'like' : 'favorite'
        if (kind === 'favorite') {
          await ix.setFavorited(item, user, on) // another kind of the same item: must not disturb likes
          continue
        }
        const expected = on !== model.has(user)
        if (on) model.add(user)
        else model.delete(user)
        const got = await ix.setLiked(item, user, on)
        expect({ op, changed: got.changed, count: got.count }).toEqual({
          op,
          changed: expected,
          count: model.size,
        })
      }
      expect(new Set(await readMembers(redis, k, 'likes', item))).toEqual(model)
      expect((await readGeometry(redis, k, 'likes', item)).buckets).toBeGreaterThan(1)
      expect(await expectWellFormed(item)).toBe(model.size)
      for (const user of ['1', '350', '700', '900']) {
        const [liked] = (await memberFlagsScript.run(
          redis,
          [k.likes(item), k.favorites(item)],
          [user],
        )) as number[]
        expect(liked === 1).toBe(model.has(user))
      }
    }
  })

  it('chunked restores: a slower restorer cannot undo an unlike made after the first one finished', async () => {
    const input = { redis, keys: k, topK: 10 }
    const users = Array.from({ length: 750 }, (_, i) => String(20_000 + i))
    // the bulk rebuild has sent its first page of item 31 (two steps, no marker yet) …
    expect(await restoreMembersOf(input, 'likes', '31', users.slice(0, 500), 'merge', false)).toEqual({
      restored: true,
      count: 500,
    })
    // … another instance restores the whole item before a toggle (marker set), then the unlike runs
    expect(await restoreMembersOf(input, 'likes', '31', users, 'merge')).toEqual({
      restored: true,
      count: 750,
    })
    expect(await ix.setLiked('31', users[700]!, false)).toMatchObject({ changed: true, count: 749 })
    // the bulk rebuild's next page, from a DB that has not applied the unlike yet: refused
    expect(await restoreMembersOf(input, 'likes', '31', users.slice(500), 'merge')).toEqual({
      restored: false,
      count: 749,
    })
    const [liked] = (await memberFlagsScript.run(
      redis,
      [k.likes('31'), k.favorites('31')],
      [users[700]!],
    )) as number[]
    expect(liked).toBe(0)
    expect(await expectWellFormed('31')).toBe(749)
  })

  it('dropMembers removes every bucket and the meta, in bounded UNLINKs', async () => {
    const users = Array.from({ length: 1500 }, (_, i) => String(i + 1))
    await likeAll('13', users)
    const geometry = await readGeometry(redis, k, 'likes', '13')
    const removed = await dropMembers(redis, k, 'likes', '13')
    expect(removed).toBe(geometry.buckets + 1)
    expect(await redis.exists(...bucketKeys(k, 'likes', '13', geometry), k.memberMeta('likes', '13'))).toBe(0)
    expect(await dropMembers(redis, k, 'likes', '13')).toBe(0)
  })
})
