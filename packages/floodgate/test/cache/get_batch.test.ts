import { once } from 'node:events'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { GetBatcher } from '../../src/cache/l2/get_batch.js'
import { createCache, createRedisClient, InvalidArgumentError } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_URL, testRedis, uniquePrefix } from '../support/redis.js'

// single node only, in the cluster pass too: a cluster reads a GET per key (test/cluster/l2_reads.test.ts)
const admin = testRedis()
const prefix = uniquePrefix('get-batch')
const key = (name: string) => `${prefix}:${name}`
let client: Redis

beforeAll(async () => {
  client = await connected(createRedisClient(TEST_REDIS_URL) as Redis)
  await admin.mset(key('a'), 'A', key('b'), 'B', key('c'), 'C')
})

afterAll(async () => {
  client.disconnect()
  await deleteByPrefix(admin, prefix)
  admin.disconnect()
})

/** `redis` once ready: floodgate's clients have no offline queue. */
async function connected(redis: Redis): Promise<Redis> {
  if (redis.status !== 'ready') await once(redis, 'ready')
  return redis
}

/** Records the name and arguments of every command `client` sends until `stop()`. */
function recordCommands() {
  const send = vi.spyOn(client, 'sendCommand')
  const commands = () =>
    send.mock.calls.map(([command]) => {
      const c = command as unknown as { name: string; args: unknown[] }
      return [c.name, ...c.args.map(String)]
    })
  return { commands, stop: () => send.mockRestore() }
}

const nextPollPhase = () => new Promise(setImmediate)
const text = (value: Buffer | null) => value?.toString() ?? null

describe('GetBatcher', () => {
  it('sends the GETs of one poll phase as one MGET: replies in order, absent as null, a repeated key read once', async () => {
    const gets = new GetBatcher(256)
    const sent = recordCommands()
    try {
      const reads = ['a', 'missing', 'b', 'a'].map((name) => gets.get(client, key(name)))
      expect(sent.commands()).toEqual([]) // nothing leaves before the poll phase ends
      expect((await Promise.all(reads)).map(text)).toEqual(['A', null, 'B', 'A'])
      expect(sent.commands()).toEqual([['mget', key('a'), key('missing'), key('b')]])
    } finally {
      sent.stop()
    }
  })

  it('sends a full batch at once, the rest when the poll phase ends; a lone key as a GET', async () => {
    const gets = new GetBatcher(2)
    const sent = recordCommands()
    try {
      const reads = ['a', 'b', 'c'].map((name) => gets.get(client, key(name)))
      expect(sent.commands()).toEqual([['mget', key('a'), key('b')]])
      expect((await Promise.all(reads)).map(text)).toEqual(['A', 'B', 'C'])
      expect(sent.commands()).toEqual([
        ['mget', key('a'), key('b')],
        ['get', key('c')],
      ])
    } finally {
      sent.stop()
    }
  })

  it('with maxKeys 1 sends a GET per read, at once', async () => {
    const gets = new GetBatcher(1)
    const sent = recordCommands()
    try {
      const reads = ['a', 'a'].map((name) => gets.get(client, key(name)))
      expect(sent.commands()).toEqual([
        ['get', key('a')],
        ['get', key('a')],
      ])
      expect((await Promise.all(reads)).map(text)).toEqual(['A', 'A'])
    } finally {
      sent.stop()
    }
  })

  it('never joins a batch that left: a read asked after a write sees it', async () => {
    const gets = new GetBatcher(256)
    await admin.set(key('w'), 'v1')
    const before = gets.get(client, key('w'))
    await nextPollPhase() // the batch leaves
    const written = client.set(key('w'), 'v2') // behind that MGET on the same connection
    const after = gets.get(client, key('w'))
    await written
    expect(text(await before)).toBe('v1')
    expect(text(await after)).toBe('v2')
  })

  it('rejects every read of a failed batch with the command error', async () => {
    const closed = createRedisClient(TEST_REDIS_URL) as Redis
    closed.on('error', () => undefined)
    closed.disconnect() // floodgate's clients have no offline queue: commands fail at once
    const gets = new GetBatcher(256)
    const reads = ['a', 'b'].map((name) => gets.get(closed, key(name)))
    const results = await Promise.allSettled(reads)
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    const [first, second] = results as PromiseRejectedResult[]
    expect(first!.reason).toBeInstanceOf(Error)
    expect(second!.reason).toBe(first!.reason)
  })

  it('fails the reads of a batch whose client throws instead of rejecting; the next batch leaves', async () => {
    const gets = new GetBatcher(256)
    const thrown = new Error('thrown by the client')
    vi.spyOn(client, 'mgetBuffer').mockImplementationOnce(() => {
      throw thrown
    })
    const failed = await Promise.allSettled(['a', 'b'].map((name) => gets.get(client, key(name))))
    expect(failed.map((r) => (r.status === 'rejected' ? r.reason : r.value))).toEqual([thrown, thrown])
    const next = await Promise.all(['a', 'b'].map((name) => gets.get(client, key(name))))
    expect(next.map(text)).toEqual(['A', 'B'])
  })

  it('leaves under fake timers too (they replace the global setImmediate)', async () => {
    const gets = new GetBatcher(256)
    vi.useFakeTimers()
    try {
      const reads = Promise.all(['a', 'c'].map((name) => gets.get(client, key(name))))
      expect((await reads).map(text)).toEqual(['A', 'C'])
    } finally {
      vi.useRealTimers()
    }
  }, 2_000)

  it('batches per connection', async () => {
    const other = await connected(createRedisClient(TEST_REDIS_URL) as Redis)
    try {
      const gets = new GetBatcher(256)
      const sent = recordCommands()
      try {
        const reads = [gets.get(client, key('a')), gets.get(other, key('b')), gets.get(client, key('c'))]
        expect((await Promise.all(reads)).map(text)).toEqual(['A', 'B', 'C'])
        expect(sent.commands()).toEqual([['mget', key('a'), key('c')]])
      } finally {
        sent.stop()
      }
    } finally {
      other.disconnect()
    }
  })
})

describe('L2 reads of a cache (getOrLoad)', () => {
  /** 40 values in L2 only, read at once by a cache with no L1; the commands its client sent. */
  async function readFortyAtOnce(name: string, readBatchMaxKeys?: number) {
    const cache = createCache<string>({ redis: client, prefix, name, l1: false, readBatchMaxKeys })
    try {
      await cache.ready
      const ids = Array.from({ length: 40 }, (_, i) => `v${i}`)
      await Promise.all(ids.map((id) => cache.set(id, `value ${id}`)))
      const sent = recordCommands()
      try {
        const values = await Promise.all(ids.map((id) => cache.getOrLoad(id, () => 'loaded')))
        expect(values).toEqual(ids.map((id) => `value ${id}`))
        return sent.commands().map(([command, ...keys]) => `${command} ×${keys.length}`)
      } finally {
        sent.stop()
      }
    } finally {
      cache.close()
    }
  }

  it('the L2 hits of one poll phase are one MGET by default, a GET each with readBatchMaxKeys 1', async () => {
    expect(await readFortyAtOnce('batched')).toEqual(['mget ×40'])
    expect(await readFortyAtOnce('unbatched', 1)).toEqual(Array(40).fill('get ×1'))
    expect(await readFortyAtOnce('in-three', 16)).toEqual(['mget ×16', 'mget ×16', 'mget ×8'])
  })

  it('refuses a readBatchMaxKeys that is not a positive integer', () => {
    for (const readBatchMaxKeys of [0, 1.5, -1])
      expect(() => createCache({ redis: client, name: 'bad', readBatchMaxKeys })).toThrow(
        InvalidArgumentError,
      )
  })
})
