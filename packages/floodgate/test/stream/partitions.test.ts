import { until } from '@floodgate/test-support'
import { describe, expect, it } from 'vitest'
import { type BatchHandler, StreamGroupConsumer } from '../../src/stream/index.js'
import { poll, streamFixture } from './stream_fixture.js'

const { redis, prefix, streamPair, lastMembersKey, add, consumer } = streamFixture()

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
    const membersKey = lastMembersKey()
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
    const membersKey = lastMembersKey()
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
    const membersKey = lastMembersKey()
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
