import { describe, expect, it } from 'vitest'
import { LuaScript } from '../../src/redis/lua_script.js'
import { compareStreamIds } from '../../src/stream/index.js'
import { streamFixture } from './stream_fixture.js'

const { redis, streamPair, add } = streamFixture()
const trim = new LuaScript(new URL('../../src/stream/lua/trim-1.lua', import.meta.url))
const deadLetter = new LuaScript(new URL('../../src/stream/lua/dead-letter-2.lua', import.meta.url))

describe('stream ids', () => {
  it('compare numerically by ms then seq', () => {
    expect(compareStreamIds('9-0', '10-0')).toBe(-1)
    expect(compareStreamIds('10-2', '10-10')).toBe(-1)
    expect(compareStreamIds('10-10', '10-10')).toBe(0)
    expect(() => compareStreamIds('x', '1-0')).toThrow(TypeError)
  })
})

describe('trim-1.lua', () => {
  it('trims acknowledged entries only: never a pending or undelivered one', async () => {
    const { stream } = streamPair()
    const ids = await add(stream, 10)
    await redis.xgroup('CREATE', stream, 'g', '0')
    await redis.xreadgroup('GROUP', 'g', 'a', 'COUNT', 6, 'STREAMS', stream, '>')
    await redis.xack(stream, 'g', ids[0]!, ids[1]!, ids[4]!)
    const first = (await trim.run(redis, [stream], ['g'])) as unknown[]
    expect(first.slice(0, 5)).toEqual([2, 8, 3, ids[2], ids[6]])
    expect(first[6]).toBe(4)
    expect(await redis.xrange(stream, ids[2]!, ids[2]!)).toHaveLength(1)
    await redis.xack(stream, 'g', ids[2]!, ids[3]!, ids[5]!)
    const second = (await trim.run(redis, [stream], ['g'])) as unknown[]
    // everything below the last delivered id (ids[5]) is gone; ids[5] and the undelivered 6…9 stay
    expect(second.slice(0, 5)).toEqual([3, 5, 0, '', ids[6]])
    expect(second[6]).toBeGreaterThanOrEqual(1)
    expect((await redis.xrange(stream, '-', '+')).map(([id]) => id)).toEqual(ids.slice(5))
  })

  it('respects the slowest of several groups and leaves a stream without groups alone', async () => {
    const { stream } = streamPair()
    const ids = await add(stream, 4)
    expect(((await trim.run(redis, [stream], ['g'])) as unknown[])[0]).toBe(0)
    await redis.xgroup('CREATE', stream, 'g', '0')
    await redis.xgroup('CREATE', stream, 'slow', '0')
    await redis.xreadgroup('GROUP', 'g', 'a', 'COUNT', 4, 'STREAMS', stream, '>')
    await redis.xack(stream, 'g', ...ids)
    expect(((await trim.run(redis, [stream], ['g'])) as unknown[])[0]).toBe(0)
    expect(await redis.xlen(stream)).toBe(4)
  })
})

describe('dead-letter-2.lua', () => {
  it('moves a pending entry with its error and acks it, once', async () => {
    const { stream, deadLetter: dead } = streamPair()
    const [id] = await add(stream, 1, () => ['k', 'like', 'v', 'bad'])
    await redis.xgroup('CREATE', stream, 'g', '0')
    await redis.xreadgroup('GROUP', 'g', 'a', 'COUNT', 1, 'STREAMS', stream, '>')
    expect(await deadLetter.run(redis, [stream, dead], ['g', id!, 'boom', 5, 'a'])).toBe(1)
    expect(await deadLetter.run(redis, [stream, dead], ['g', id!, 'boom', 5, 'a'])).toBe(0)
    const letters = await redis.xrange(dead, '-', '+')
    expect(letters).toHaveLength(1)
    expect(letters[0]?.[1]).toEqual([
      'k',
      'like',
      'v',
      'bad',
      '_id',
      id,
      '_stream',
      stream,
      '_error',
      'boom',
      '_deliveries',
      '5',
      '_consumer',
      'a',
    ])
    expect(((await redis.xpending(stream, 'g')) as unknown[])[0]).toBe(0)
  })
})
