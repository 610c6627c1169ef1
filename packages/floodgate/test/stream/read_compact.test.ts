import { until } from '@floodgate/test-support'
import { describe, expect, it } from 'vitest'
import { createRedisClient } from '../../src/index.js'
import { readGroupEach, readGroupEachCompact } from '../../src/stream/group_commands.js'
import type { StreamEntry } from '../../src/stream/index.js'
import { PrivateRedis } from '../support/redis_server.js'
import { poll, streamFixture } from './stream_fixture.js'

const { redis, streamPair, add, consumer } = streamFixture()

describe('read-compact-1.lua (compactRead)', () => {
  it('reads what XREADGROUP reads, delivered alike, a NUL byte in a field included', async () => {
    const plain = streamPair()
    const compact = streamPair()
    const fields = (i: number) =>
      i === 3 ? ['k', 'like', 'u', 'a\0b', 'e', ''] : ['k', 'play', 'v', String(i), 'w', `ü${i}`]
    for (const s of [plain, compact]) {
      await add(s.stream, 6, fields)
      await redis.xgroup('CREATE', s.stream, 'g', '0')
    }
    const [fromPlain] = await readGroupEach(redis, 'g', 'c', [plain.stream], 5)
    const [fromCompact] = await readGroupEachCompact(redis, 'g', 'c', [compact.stream], 5)
    const shape = (entries: StreamEntry[] | undefined) => entries?.map((e) => e.fields)
    expect(fromCompact).toHaveLength(5)
    expect(shape(fromCompact)).toEqual(shape(fromPlain))
    expect(fromCompact![3]!.fields.u).toBe('a\0b')
    // the group sees the same: 5 pending to c, delivered once, the 6th still new
    const pending = (await redis.xpending(compact.stream, 'g', '-', '+', 10)) as [
      string,
      string,
      number,
      number,
    ][]
    expect(pending.map(([id, owner, , deliveries]) => [id, owner, deliveries])).toEqual(
      fromCompact!.map((e) => [e.id, 'c', 1]),
    )
    const [rest] = await readGroupEachCompact(redis, 'g', 'c', [compact.stream], 5)
    expect(rest!.map((e) => e.fields.v)).toEqual(['5'])
    expect(await readGroupEachCompact(redis, 'g', 'c', [compact.stream], 5)).toEqual([[]])
  })

  it('fails with NOGROUP on a stream without the group', async () => {
    const { stream } = streamPair()
    await expect(readGroupEachCompact(redis, 'g', 'c', [stream], 5)).rejects.toThrow(/NOGROUP/)
  })

  it('after a lost script cache: fails once, reading nothing, then reads again', async () => {
    // a private server: SCRIPT FLUSH on the shared one would hit other suites' scripts
    const server = await PrivateRedis.start()
    const client = createRedisClient(server.url)
    await new Promise((resolve) => client.once('ready', resolve))
    try {
      const stream = 'read-compact:{s}:stream'
      const ids: string[] = []
      for (const i of [0, 1]) ids.push((await client.xadd(stream, '*', 'i', String(i))) as string)
      await client.xgroup('CREATE', stream, 'g', '0')
      expect(await readGroupEachCompact(client, 'g', 'c', [stream], 1)).toEqual([
        [{ stream, id: ids[0], fields: { i: '0' } }],
      ])
      await client.script('FLUSH')
      await expect(readGroupEachCompact(client, 'g', 'c', [stream], 1)).rejects.toThrow(/NOSCRIPT/)
      const [entries] = await readGroupEachCompact(client, 'g', 'c', [stream], 5)
      expect(entries!.map((e) => e.id)).toEqual([ids[1]])
    } finally {
      client.disconnect()
      await server.destroy()
    }
  })

  it('a consumer with compactRead applies every entry once, in order, over several streams', async () => {
    const sources = [streamPair(), streamPair(), streamPair()]
    const ids = new Map<string, string[]>()
    for (const s of sources) ids.set(s.stream, await add(s.stream, 12))
    const seen = new Map<string, string[]>(sources.map((s) => [s.stream, []]))
    const c = consumer({
      sources,
      batchSize: 9,
      compactRead: true,
      handler: async (entries) => {
        for (const e of entries) seen.get(e.stream)!.push(e.id)
        return undefined
      },
    })
    c.start()
    await until(() => c.stats.applied === 36, poll)
    for (const s of sources) expect(seen.get(s.stream)).toEqual(ids.get(s.stream))
  })
})
