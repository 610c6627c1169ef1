import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { Registry } from 'prom-client'
import { afterAll, describe, expect, it } from 'vitest'
import { LuaScript } from '../../src/redis/lua_script.js'
import {
  type BatchHandler,
  compareStreamIds,
  type StreamConsumerOptions,
  type StreamEntry,
  StreamGroupConsumer,
} from '../../src/stream/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('stream')
const trim = new LuaScript(new URL('../../src/stream/lua/trim-1.lua', import.meta.url))
const deadLetter = new LuaScript(new URL('../../src/stream/lua/dead-letter-2.lua', import.meta.url))
let n = 0
const consumers: StreamGroupConsumer[] = []

afterAll(async () => {
  await Promise.all(consumers.map((c) => c.stop()))
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

function streamPair() {
  n++
  return { stream: `${prefix}:{s${n}}:stream`, deadLetter: `${prefix}:{s${n}}:dead` }
}

async function add(stream: string, count: number, fields: (i: number) => string[] = (i) => ['i', String(i)]) {
  const ids: string[] = []
  for (let i = 0; i < count; i++) ids.push((await redis.xadd(stream, '*', ...fields(i))) as string)
  return ids
}

function consumer(
  options: Partial<StreamConsumerOptions> & Pick<StreamConsumerOptions, 'sources' | 'handler'>,
) {
  const c = new StreamGroupConsumer(redis, {
    group: 'g',
    blockMs: 100,
    claimIdleMs: 150,
    claimIntervalMs: 50,
    maintenanceIntervalMs: 100,
    backoffBaseMs: 10,
    backoffMaxMs: 50,
    ...options,
  })
  consumers.push(c)
  return c
}

/** until()'s options here: several checks ask Redis, so a 20 ms poll; 10 s for a loaded machine. */
const poll = { timeoutMs: 10_000, everyMs: 20 }

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

describe('StreamGroupConsumer', () => {
  it('applies new entries, acks them, and trims behind itself', async () => {
    const source = streamPair()
    const seen: string[] = []
    const c = consumer({
      sources: [source],
      batchSize: 7,
      handler: async (entries) => {
        expect(entries.length).toBeLessThanOrEqual(7)
        seen.push(...entries.map((e) => e.fields.i!))
        return undefined
      },
    })
    c.start()
    await add(source.stream, 30)
    await until(() => seen.length === 30, poll)
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => String(i)))
    expect(c.stats.claimed).toBe(0)
    await until(async () => (await c.maintain()).pending === 0, poll)
    const lag = await c.maintain()
    expect(lag.length).toBeLessThanOrEqual(1)
  })

  it('recreates its group after Redis lost the stream (FLUSHALL, restart) and reads the new entries', async () => {
    const source = streamPair()
    const seen: string[] = []
    const c = consumer({
      sources: [source],
      handler: async (entries) => {
        seen.push(...entries.map((e) => e.fields.i!))
        return undefined
      },
    })
    c.start()
    await add(source.stream, 2)
    await until(() => seen.length === 2, poll)
    await redis.del(source.stream) // the stream and its group are gone
    await sleep(150)
    await add(source.stream, 3, (i) => ['i', `new${i}`])
    await until(() => seen.length === 5, poll)
    expect(seen.slice(2)).toEqual(['new0', 'new1', 'new2'])
  })

  it('claims entries left pending by a dead consumer, dropping ids deleted meanwhile', async () => {
    const source = streamPair()
    const ids = await add(source.stream, 5)
    await redis.xgroup('CREATE', source.stream, 'g', '0')
    await redis.xreadgroup('GROUP', 'g', 'dead-one', 'COUNT', 5, 'STREAMS', source.stream, '>')
    await redis.xdel(source.stream, ids[1]!)
    const seen: string[] = []
    const c = consumer({
      sources: [source],
      handler: async (entries) => {
        seen.push(...entries.map((e) => e.id))
        return undefined
      },
    })
    c.start()
    await until(() => seen.length === 4, poll)
    expect(seen).toEqual([ids[0], ids[2], ids[3], ids[4]])
    expect(c.stats.claimed).toBe(4)
    expect(c.stats.deletedWhilePending).toBe(1)
    await until(async () => (await c.maintain()).pending === 0, poll)
  })

  it('retries a transient failure with backoff, unacknowledged, then applies', async () => {
    const source = streamPair()
    let calls = 0
    const applied: StreamEntry[] = []
    const c = consumer({
      sources: [source],
      handler: async (entries) => {
        calls++
        if (calls <= 3) throw new Error('database down')
        applied.push(...entries)
        return undefined
      },
    })
    c.start()
    await add(source.stream, 3)
    await until(() => applied.length === 3, poll)
    expect(c.stats.transientFailures).toBe(3)
    expect(((await redis.xpending(source.stream, 'g')) as unknown[])[0]).toBe(0)
  })

  it('isolates a poison entry by bisection and dead-letters it after maxDeliveries', async () => {
    const source = streamPair()
    const applied = new Set<string>()
    const handler: BatchHandler = async (entries) => {
      if (entries.some((e) => e.fields.i === 'poison'))
        throw Object.assign(new Error('bad data'), { poison: true })
      for (const e of entries) applied.add(e.fields.i!)
      return undefined
    }
    const registry = new Registry()
    const c = consumer({
      sources: [source],
      handler,
      maxDeliveries: 3,
      isPoison: (e) => (e as { poison?: boolean }).poison === true,
      registry,
    })
    const ids = await add(source.stream, 9, (i) => ['i', i === 4 ? 'poison' : String(i)])
    c.start()
    await until(() => applied.size === 8, poll)
    await until(async () => (await redis.xlen(source.deadLetter)) === 1, poll)
    const [letter] = await redis.xrange(source.deadLetter, '-', '+')
    const fields = letter![1]
    expect(fields.slice(0, 4)).toEqual(['i', 'poison', '_id', ids[4]])
    expect(fields[fields.indexOf('_error') + 1]).toContain('bad data')
    expect(fields[fields.indexOf('_deliveries') + 1]).toBe('3')
    expect(c.stats.deadLettered).toBe(1)
    await until(async () => (await c.maintain()).pending === 0, poll)
    const text = await registry.metrics()
    expect(text).toMatch(/floodgate_stream_dead_lettered_total\{group="g"\} 1/)
    expect(text).toMatch(/floodgate_stream_applied_total\{group="g"\} 8/)
    expect(text).toMatch(/floodgate_stream_pending\{group="g"\} 0/)
  })

  it('handler rejections through BatchOutcome.failed are retried, then dead-lettered', async () => {
    const source = streamPair()
    const c = consumer({
      sources: [source],
      maxDeliveries: 2,
      handler: async (entries) => ({
        failed: entries.map((entry) => ({ entry, error: new Error('never') })),
      }),
    })
    await add(source.stream, 2)
    c.start()
    await until(async () => (await redis.xlen(source.deadLetter)) === 2, poll)
    expect(c.stats.rejected).toBe(2)
    expect(c.stats.deadLettered).toBe(2)
  })
})

describe('StreamGroupConsumer partition assignment (membersKey)', () => {
  it('refuses a member TTL a healthy consumer could outlast between two heartbeats', () => {
    const sources = [streamPair()]
    const handler: BatchHandler = async () => undefined
    const options = { sources, group: 'g', handler, membersKey: `${prefix}:members:bad` }
    expect(
      () =>
        new StreamGroupConsumer(redis, {
          ...options,
          maintenanceIntervalMs: 1000,
          blockMs: 1000,
          memberTtlMs: 2000,
        }),
    ).toThrow(/memberTtlMs/)
    expect(() => new StreamGroupConsumer(redis, { ...options, membersKey: '' })).toThrow(/membersKey/)
  })

  it('shares the streams among live members, each reading only its own, and hands a stopped member’s streams over', async () => {
    const sources = [streamPair(), streamPair(), streamPair(), streamPair()]
    const membersKey = `${prefix}:members:${n}`
    const readBy = new Map<string, Set<string>>() // stream -> consumers that applied its entries
    const applied: string[] = []
    const make = (name: string) =>
      consumer({
        sources,
        consumerName: name,
        membersKey,
        // generous, so a stalled event loop on a loaded machine neither drops a member nor makes
        // the other one help with its streams mid-test
        memberTtlMs: 30_000,
        helpAfterMs: 30_000,
        handler: async (entries) => {
          for (const e of entries) {
            const set = readBy.get(e.stream) ?? new Set()
            set.add(name)
            readBy.set(e.stream, set)
            applied.push(e.fields.i!)
          }
          return undefined
        },
      })
    const a = make('member-a')
    const b = make('member-b')
    a.start()
    b.start()
    // both see two members: a takes streams 0 and 2, b takes 1 and 3 (members sorted by name)
    await until(() => a.assignedStreams.length === 2 && b.assignedStreams.length === 2, poll)
    expect(a.assignedStreams).toEqual([sources[0]!.stream, sources[2]!.stream])
    expect(b.assignedStreams).toEqual([sources[1]!.stream, sources[3]!.stream])
    expect([a.liveMembers, b.liveMembers]).toEqual([2, 2])
    for (const [i, s] of sources.entries()) await add(s.stream, 5, (k) => ['i', `${i}:${k}`])
    await until(() => applied.length === 20, poll)
    // every stream was applied by exactly its owner: no two consumers worked on the same partition
    expect(sources.map((s) => [...(readBy.get(s.stream) ?? [])])).toEqual([
      ['member-a'],
      ['member-b'],
      ['member-a'],
      ['member-b'],
    ])
    // a leaves the member set on stop; b takes every stream at its next heartbeat
    await a.stop()
    await until(() => b.assignedStreams.length === 4, poll)
    expect(b.liveMembers).toBe(1)
    readBy.clear()
    for (const [i, s] of sources.entries()) await add(s.stream, 3, (k) => ['i', `${i}:late${k}`])
    await until(() => applied.length === 32, poll)
    expect(sources.every((s) => [...(readBy.get(s.stream) ?? [])].join() === 'member-b')).toBe(true)
    expect(new Set(applied).size).toBe(32)
    for (const s of sources) await until(async () => (await redis.xpending(s.stream, 'g'))[0] === 0, poll)
  })

  it('reads a stalled member’s streams too once their new entries wait helpAfterMs, long before its TTL', async () => {
    const sources = [streamPair(), streamPair()]
    const membersKey = `${prefix}:members:${n}`
    let release: () => void = () => undefined
    const stalled = new Promise<void>((resolve) => {
      release = resolve
    })
    const byStuck: string[] = []
    const byHelper: string[] = []
    // 'a-stuck' owns stream 0 and hangs in its first batch (a stalled instance); its member TTL and
    // the claim idle time are far away, so only helping can move stream 0's new entries
    const stuck = consumer({
      sources,
      consumerName: 'a-stuck',
      membersKey,
      memberTtlMs: 60_000,
      helpAfterMs: 300,
      claimIdleMs: 60_000, // the held entry is not claimed: only new entries are helped with
      handler: async (entries) => {
        byStuck.push(...entries.map((e) => e.fields.i!))
        await stalled
        return undefined
      },
    })
    const helper = consumer({
      sources,
      consumerName: 'b-helper',
      membersKey,
      memberTtlMs: 60_000,
      helpAfterMs: 300,
      claimIdleMs: 60_000,
      handler: async (entries) => {
        byHelper.push(...entries.map((e) => e.fields.i!))
        return undefined
      },
    })
    stuck.start()
    helper.start()
    await until(() => stuck.assignedStreams.length === 1 && helper.assignedStreams.length === 1, poll)
    expect(stuck.assignedStreams).toEqual([sources[0]!.stream])
    await add(sources[0]!.stream, 1, () => ['i', 'first'])
    await until(() => byStuck.length === 1, poll) // a-stuck holds 'first' and hangs
    expect(helper.helpingStreams).toEqual([])
    await add(sources[0]!.stream, 3, (k) => ['i', `later${k}`])
    await until(() => byHelper.length === 3, poll)
    expect(byHelper).toEqual(['later0', 'later1', 'later2'])
    expect(byStuck).toEqual(['first'])
    release()
    // caught up: the helper stops reading stream 0 at its next maintenance round
    await until(() => helper.helpingStreams.length === 0, poll)
    for (const s of sources) await until(async () => (await redis.xpending(s.stream, 'g'))[0] === 0, poll)
  })

  it('drops a member silent for memberTtlMs and gives its streams to the live ones', async () => {
    const sources = [streamPair(), streamPair()]
    const membersKey = `${prefix}:members:${n}`
    // a crashed member: one heartbeat long ago, never again (score in Redis time, ms)
    const [seconds] = await redis.time()
    await redis.zadd(membersKey, Number(seconds) * 1000 - 60_000, 'crashed')
    const seen: string[] = []
    const c = consumer({
      sources,
      consumerName: 'alive',
      membersKey,
      memberTtlMs: 5_000,
      handler: async (entries) => {
        seen.push(...entries.map((e) => e.stream))
        return undefined
      },
    })
    c.start()
    await until(() => c.assignedStreams.length === 2, poll)
    expect(await redis.zrange(membersKey, '0', '-1')).toEqual(['alive'])
    await add(sources[0]!.stream, 1)
    await add(sources[1]!.stream, 1)
    await until(() => seen.length === 2, poll)
    expect(seen.sort()).toEqual([sources[0]!.stream, sources[1]!.stream].sort())
  })
})
