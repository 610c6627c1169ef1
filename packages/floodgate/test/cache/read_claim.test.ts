import { once } from 'node:events'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { readClaimReplies, readClaimScript } from '../../src/cache/scripts.js'
import { type Cache, type CacheOutcome, createCache, createRedisClient } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_URL, testRedis, uniquePrefix } from '../support/redis.js'

// While most of a cache's recent L2 reads miss, an L1 miss reads L2 and, when the value is absent,
// claims the loader lock in the same round trip (read-claim-n.lua); while most hit, it sends a GET.
// Single node (the cluster pass reads through it: test/cluster/crossslot).
const admin = testRedis()
const prefix = uniquePrefix('read-claim')
let client: Redis

beforeAll(async () => {
  client = createRedisClient(TEST_REDIS_URL) as Redis
  if (client.status !== 'ready') await once(client, 'ready')
})

afterAll(async () => {
  client.disconnect()
  await deleteByPrefix(admin, prefix)
  admin.disconnect()
})

/** The four keys of `name` as the cache lays them out (value, version, lock, waiters flag). */
const keysOf = (name: string) => {
  const value = `${prefix}:s:{${name}}`
  return [value, `${value}:ver`, `${value}:lock`, `${value}:wait`]
}

describe('read-claim-n.lua', () => {
  it('answers each item in order: the value (no lock), the lock taken, or the lock held', async () => {
    const binary = Buffer.from([0x66, 0x00, 0xff, 0x7c])
    const [present, absent, held] = [keysOf('present'), keysOf('absent'), keysOf('held')]
    await admin.set(present[0]!, binary)
    await admin.set(absent[1]!, '7') // a version from an earlier invalidation
    await admin.set(held[2]!, 'someone-else', 'PX', 5000)
    const reply = await readClaimScript.run(
      client,
      [...present, ...absent, ...held],
      ['t1', 1000, 't2', 1000, 't3', 1000],
      'buffer',
    )
    const [a, b, c] = readClaimReplies(reply, 3)
    expect(a).toEqual({ kind: 'value', bytes: binary })
    expect(await admin.exists(present[2]!)).toBe(0)
    expect(b).toEqual({ kind: 'acquired', version: '7' })
    expect(await admin.get(absent[2]!)).toBe('t2')
    expect(await admin.pttl(absent[2]!)).toBeGreaterThan(900)
    expect(c).toMatchObject({ kind: 'busy', version: '0' })
    expect(c?.kind === 'busy' && c.pttlMs > 4000).toBe(true)
    expect(await admin.get(held[2]!)).toBe('someone-else')
    expect(await admin.exists(held[3]!)).toBe(1) // its fill will publish a wake-up
    expect(await admin.pttl(held[3]!)).toBeGreaterThan(4000)
  })
})

describe('an L1 miss (getOrLoad)', () => {
  /** A cache without L1 whose client's commands are recorded; `commands()` lists their names. */
  function recordedCache(name: string) {
    const cache = createCache<string>({ redis: client, prefix, name, l1: false })
    const outcomes: CacheOutcome[] = []
    cache.events.on('outcome', (e) => outcomes.push(e.outcome))
    const send = vi.spyOn(client, 'sendCommand')
    const commands = () => send.mock.calls.map(([command]) => (command as unknown as { name: string }).name)
    return { cache, outcomes, commands, stop: () => send.mockRestore() }
  }

  /** Reads `n` absent keys one by one: the cache's recent L2 reads all missed. */
  async function missTimes(cache: Cache<string>, n: number) {
    for (let i = 0; i < n; i++) await cache.getOrLoad(`warm-miss-${i}`, async () => 'loaded')
  }

  /** The commands sent between a cold read of `key` and its load. */
  async function sentBeforeLoadOf(cache: Cache<string>, commands: () => string[], key: string) {
    const before = commands().length
    let sent: string[] = []
    expect(
      await cache.getOrLoad(key, async () => {
        sent = commands().slice(before)
        return 'loaded'
      }),
    ).toBe('loaded')
    return sent
  }

  it('of a new cache reads with a GET and claims after it (most reads are hits until shown otherwise)', async () => {
    const { cache, commands, stop } = recordedCache('new')
    try {
      await cache.ready
      const sent = await sentBeforeLoadOf(cache, commands, 'k')
      // a GET, then claim-4.lua (EVALSHA, and EVAL if Redis has not cached the script)
      expect(sent[0]).toBe('get')
      expect(sent.slice(1).length).toBeGreaterThan(0)
      expect(sent.slice(1).every((c) => c === 'evalsha' || c === 'eval')).toBe(true)
    } finally {
      stop()
      cache.close()
    }
  })

  it('goes back to a GET once most recent reads hit', async () => {
    const { cache, commands, stop } = recordedCache('back')
    try {
      await cache.ready
      await missTimes(cache, 40)
      expect(await sentBeforeLoadOf(cache, commands, 'cold-1')).toEqual(['evalsha'])
      // 40 L2 hits: the keys warm-miss-0… were filled by the misses above
      await expect.poll(() => admin.exists(`${prefix}:c:back:{warm-miss-39}`)).toBe(1)
      for (let i = 0; i < 40; i++)
        expect(await cache.getOrLoad(`warm-miss-${i}`, async () => 'unused')).toBe('loaded')
      expect((await sentBeforeLoadOf(cache, commands, 'cold-2'))[0]).toBe('get')
    } finally {
      stop()
      cache.close()
    }
  })

  it('of an absent key, once most recent reads missed, waits for one Redis reply before its load, not two', async () => {
    await client.script('LOAD', readClaimScript.source)
    const { cache, commands, stop } = recordedCache('cold')
    try {
      await cache.ready
      await missTimes(cache, 40)
      const before = commands().length
      let sentBeforeLoad: string[] = []
      const value = await cache.getOrLoad('k', async () => {
        sentBeforeLoad = commands().slice(before)
        return 'loaded'
      })
      expect(value).toBe('loaded')
      // before: a GET (or MGET), then claim-4.lua; now one read-claim-n.lua call
      expect(sentBeforeLoad).toEqual(['evalsha'])
      await expect.poll(() => admin.exists(`${prefix}:c:cold:{k}`)).toBe(1) // the fill, behind the answer
    } finally {
      stop()
      cache.close()
    }
  })

  it('50 concurrent misses of a cold key, once most reads missed: one read-claim, one load, each caller the value', async () => {
    const { cache, outcomes, commands, stop } = recordedCache('herd')
    try {
      await cache.ready
      await missTimes(cache, 40)
      const before = commands().length
      outcomes.length = 0
      let loads = 0
      const values = await Promise.all(
        Array.from({ length: 50 }, () =>
          cache.getOrLoad('k', async () => {
            loads++
            await new Promise((resolve) => setTimeout(resolve, 20))
            return 'loaded'
          }),
        ),
      )
      expect(values).toEqual(Array(50).fill('loaded'))
      expect(loads).toBe(1)
      const scripts = commands()
        .slice(before)
        .filter((c) => c === 'evalsha' || c === 'eval')
      expect(scripts.length).toBeLessThanOrEqual(2) // read-claim, fill
      expect(commands().slice(before)).not.toContain('get')
      expect(outcomes.filter((o) => o === 'load')).toHaveLength(1)
      expect(outcomes.filter((o) => o === 'load_joined')).toHaveLength(49)
    } finally {
      stop()
      cache.close()
    }
  })
})
