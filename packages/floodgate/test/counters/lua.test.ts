import { afterAll, describe, expect, it } from 'vitest'
import { LuaScript, toMember } from '../../src/index.js'
import { InteractionKeys } from '../../src/interactions/keys.js'
import { readGeometry, readMembers } from '../../src/interactions/member_buckets.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('ctrlua')
const keys = new InteractionKeys(prefix, 4)
const lua = (name: string) => new LuaScript(new URL(`../../src/counters/lua/${name}`, import.meta.url))
const restoreMembers = lua('restore-members-4.lua')
const restorePlays = lua('restore-plays-3.lua')
const commitEpoch = lua('commit-epoch-2.lua')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  await redis.del(`{${keys.epoch()}}:rebuild`)
  redis.disconnect()
})

describe('restore-members-4.lua', () => {
  const markers = (p: number) => keys.space.tagged('ix', keys.tagOf(p), 'restored')
  const run = (
    set: string,
    rank: string,
    id: string,
    flags: [string, string],
    users: string[],
    kind = 'likes',
  ) =>
    restoreMembers.run(
      redis,
      [set, rank, markers(keys.partitionOf(id)), keys.gone(id)],
      [toMember(id), 10, flags[0], flags[1], `${kind}:${id}`, 60_000, 128, ...users],
    )

  it('merge adds DB members to what is there, sets the ranking to the SCARD, once per recovery', async () => {
    const set = keys.likes('5')
    const rank = keys.rankAll(keys.partitionOf('5'), 'likes')
    await redis.sadd(set, '99') // a like written after the loss
    expect(await run(set, rank, '5', ['1', 'merge'], ['1', '2', '3'])).toEqual([1, 4])
    expect((await redis.smembers(set)).sort()).toEqual(['1', '2', '3', '99'])
    expect(await redis.zscore(rank, toMember('5'))).toBe('4')
    expect(await redis.pttl(markers(keys.partitionOf('5')))).toBeGreaterThan(50_000)
    // User 2 unlikes; a second restore from a DB that still has the row must not undo that.
    await redis.srem(set, '2')
    expect(await run(set, rank, '5', ['1', 'merge'], ['1', '2', '3'])).toEqual([0, 3])
    expect(await redis.sismember(set, '2')).toBe(0)
  })

  it('records the marker even with no members; replace ignores markers and drops extras', async () => {
    const set = keys.favorites('9')
    const rank = keys.rankAll(keys.partitionOf('9'), 'likes')
    expect(await run(set, rank, '9', ['0', 'merge'], [], 'favorites')).toEqual([1, 0])
    expect(await run(set, rank, '9', ['0', 'merge'], ['4'], 'favorites')).toEqual([0, 0])
    await redis.sadd(set, '7', '8')
    expect(await run(set, rank, '9', ['0', 'replace'], ['1'], 'favorites')).toEqual([1, 1])
    expect(await redis.smembers(set)).toEqual(['1'])
    expect(await redis.zscore(rank, toMember('9'))).toBeNull()
  })

  it('takes more members than one unpack() can and trims the ranking to K', async () => {
    const users = Array.from({ length: 2500 }, (_, i) => String(i + 1))
    const rank = keys.rankAll(1, 'likes')
    for (const id of ['1', '5', '9']) await redis.zadd(rank, 1, toMember(id))
    const reply = await restoreMembers.run(
      redis,
      [keys.likes('13'), rank, markers(1), keys.gone('13')],
      [toMember('13'), 2, '1', 'merge', 'likes:13', 60_000, 128, ...users],
    )
    expect(reply).toEqual([1, 2500])
    expect(await redis.zrevrange(rank, 0, -1)).toEqual([toMember('13'), toMember('9')])
    expect((await readMembers(redis, keys, 'likes', '13')).sort((a, b) => Number(a) - Number(b))).toEqual(
      users,
    )
  })

  it('merge-part adds without the marker; the merge of the last chunk sets it; later chunks are refused', async () => {
    const set = keys.likes('17')
    const rank = keys.rankAll(keys.partitionOf('17'), 'likes')
    const users = Array.from({ length: 300 }, (_, i) => String(1000 + i))
    expect(await run(set, rank, '17', ['1', 'merge-part'], users.slice(0, 200))).toEqual([1, 200])
    expect(await redis.hexists(markers(keys.partitionOf('17')), 'likes:17')).toBe(0)
    expect(await run(set, rank, '17', ['1', 'merge'], users.slice(200))).toEqual([1, 300])
    expect(await redis.hexists(markers(keys.partitionOf('17')), 'likes:17')).toBe(1)
    // a slower restorer's chunk after the marker (and after a toggle) changes nothing
    expect(await run(set, rank, '17', ['1', 'merge-part'], ['5'])).toEqual([0, 300])
    expect(await run(set, rank, '17', ['1', 'merge'], ['5'])).toEqual([0, 300])
    expect(await redis.zscore(rank, toMember('17'))).toBe('300')
  })

  it('replace empties an item of several buckets first; add ignores markers; an unknown mode is refused', async () => {
    const set = keys.likes('21')
    const rank = keys.rankAll(keys.partitionOf('21'), 'likes')
    await run(
      set,
      rank,
      '21',
      ['1', 'merge'],
      Array.from({ length: 700 }, (_, i) => String(i + 1)),
    )
    expect((await readGeometry(redis, keys, 'likes', '21')).buckets).toBeGreaterThan(4)
    expect(await run(set, rank, '21', ['1', 'replace'], ['3', '4'])).toEqual([1, 2])
    expect(await redis.exists(keys.memberMeta('likes', '21'), keys.memberBucket('likes', '21', 1))).toBe(0)
    expect(await run(set, rank, '21', ['1', 'add'], ['5'])).toEqual([1, 3])
    expect((await redis.smembers(set)).sort()).toEqual(['3', '4', '5'])
    await expect(run(set, rank, '21', ['1', 'bogus'], ['6'])).rejects.toThrow(/unknown mode/)
  })
})

describe('restore-plays-3.lua', () => {
  it('merge keeps the larger of counter and DB count; replace sets the DB count; 0 leaves the ranking', async () => {
    const counter = keys.plays('6')
    const rank = keys.rankAll(keys.partitionOf('6'), 'plays')
    await redis.set(counter, '3')
    expect(
      await restorePlays.run(redis, [counter, rank, keys.gone('6')], [toMember('6'), 10, 10, 'merge']),
    ).toBe(10)
    expect(
      await restorePlays.run(redis, [counter, rank, keys.gone('6')], [toMember('6'), 4, 10, 'merge']),
    ).toBe(10)
    expect(await redis.zscore(rank, toMember('6'))).toBe('10')
    expect(
      await restorePlays.run(redis, [counter, rank, keys.gone('6')], [toMember('6'), 4, 10, 'replace']),
    ).toBe(4)
    expect(await redis.get(counter)).toBe('4')
    expect(
      await restorePlays.run(redis, [counter, rank, keys.gone('6')], [toMember('6'), 0, 10, 'replace']),
    ).toBe(0)
    expect(await redis.zscore(rank, toMember('6'))).toBeNull()
  })
})

describe('commit-epoch-2.lua', () => {
  it('sets the epoch only while the lock holds the token', async () => {
    const lock = `{${keys.epoch()}}:rebuild`
    await redis.set(lock, 'mine', 'PX', 5000)
    expect(await commitEpoch.run(redis, [lock, keys.epoch()], ['other', 'e1'])).toBe(0)
    expect(await redis.get(keys.epoch())).toBeNull()
    expect(await commitEpoch.run(redis, [lock, keys.epoch()], ['mine', 'e2'])).toBe(1)
    expect(await redis.get(keys.epoch())).toBe('e2')
    await redis.del(lock)
    expect(await commitEpoch.run(redis, [lock, keys.epoch()], ['mine', 'e3'])).toBe(0)
    expect(await redis.get(keys.epoch())).toBe('e2')
    await redis.del(keys.epoch())
  })
})
