import { afterAll, describe, expect, it } from 'vitest'
import { LuaScript, toMember } from '../../src/index.js'
import { InteractionKeys } from '../../src/interactions/keys.js'
import { deleteByPrefix, testRedis, uniquePrefix } from '../support/redis.js'

const redis = testRedis()
const prefix = uniquePrefix('ctrlua')
const keys = new InteractionKeys(prefix, 4)
const lua = (name: string) => new LuaScript(new URL(`../../src/counters/lua/${name}`, import.meta.url))
const restoreMembers = lua('restore-members-2.lua')
const restorePlays = lua('restore-plays-2.lua')
const commitEpoch = lua('commit-epoch-2.lua')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  await redis.del(`{${keys.epoch()}}:rebuild`)
  redis.disconnect()
})

describe('restore-members-2.lua', () => {
  it('merge adds DB members to what is there and sets the ranking to the SCARD', async () => {
    const set = keys.likes('5')
    const rank = keys.rankAll(keys.partitionOf('5'), 'likes')
    await redis.sadd(set, '99') // a like written after the loss
    expect(
      await restoreMembers.run(redis, [set, rank], [toMember('5'), 10, '1', 'merge', '1', '2', '3']),
    ).toBe(4)
    expect((await redis.smembers(set)).sort()).toEqual(['1', '2', '3', '99'])
    expect(await redis.zscore(rank, toMember('5'))).toBe('4')
    // Idempotent.
    expect(
      await restoreMembers.run(redis, [set, rank], [toMember('5'), 10, '1', 'merge', '1', '2', '3']),
    ).toBe(4)
  })

  it('replace drops members the DB does not have; favourites leave the ranking alone', async () => {
    const set = keys.favorites('9')
    const rank = keys.rankAll(keys.partitionOf('9'), 'likes')
    await redis.sadd(set, '7', '8')
    expect(await restoreMembers.run(redis, [set, rank], [toMember('9'), 10, '0', 'replace', '1'])).toBe(1)
    expect(await redis.smembers(set)).toEqual(['1'])
    expect(await redis.zscore(rank, toMember('9'))).toBeNull()
  })

  it('takes more members than one unpack() can and trims the ranking to K', async () => {
    const users = Array.from({ length: 2500 }, (_, i) => String(i + 1))
    const rank = keys.rankAll(1, 'likes')
    for (const id of ['1', '5', '9']) await redis.zadd(rank, 1, toMember(id))
    expect(
      await restoreMembers.run(redis, [keys.likes('13'), rank], [toMember('13'), 2, '1', 'merge', ...users]),
    ).toBe(2500)
    expect(await redis.zrevrange(rank, 0, -1)).toEqual([toMember('13'), toMember('9')])
  })
})

describe('restore-plays-2.lua', () => {
  it('merge keeps the larger of counter and DB count; replace sets the DB count; 0 leaves the ranking', async () => {
    const counter = keys.plays('6')
    const rank = keys.rankAll(keys.partitionOf('6'), 'plays')
    await redis.set(counter, '3')
    expect(await restorePlays.run(redis, [counter, rank], [toMember('6'), 10, 10, 'merge'])).toBe(10)
    expect(await restorePlays.run(redis, [counter, rank], [toMember('6'), 4, 10, 'merge'])).toBe(10)
    expect(await redis.zscore(rank, toMember('6'))).toBe('10')
    expect(await restorePlays.run(redis, [counter, rank], [toMember('6'), 4, 10, 'replace'])).toBe(4)
    expect(await redis.get(counter)).toBe('4')
    expect(await restorePlays.run(redis, [counter, rank], [toMember('6'), 0, 10, 'replace'])).toBe(0)
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
