import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import {
  createCache,
  createRedisClient,
  InvalidArgumentError,
  NOT_FOUND,
  StoreUnavailableError,
} from '../../src/index.js'
import { commandCalls } from '../support/command_stats.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'
import { WorkerGroup } from './workers/harness.js'

const redis = testRedisClient()
const prefix = uniquePrefix('cache-ns')
const clients = [0, 1].map(() => createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 }))
const caches: { close(): void }[] = []

afterAll(async () => {
  for (const cache of caches) cache.close()
  for (const client of clients) client.disconnect()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

/** Two instances of one cache (own clients, so own bus subscriptions and L1s). */
async function pair(name: string) {
  const [a, b] = clients.map((client) => {
    const cache = createCache<string>({ redis: client, prefix, name, redisTimeoutMs: 1000 })
    caches.push(cache)
    return cache
  }) as [ReturnType<typeof createCache<string>>, ReturnType<typeof createCache<string>>]
  await Promise.all([a.ready, b.ready])
  return [a, b] as const
}

describe('namespaces', () => {
  it('clear drops values, negative and stale entries of one namespace on every instance, nothing else', async () => {
    const [a, b] = await pair('users')
    const loads: string[] = []
    const loader = (tag: string) => async (key: string) => {
      loads.push(`${tag}:${key}`)
      return key === 'ghost' ? NOT_FOUND : `${key}@${tag}`
    }
    const [na, nb] = [a.namespace('tenant-1'), b.namespace('tenant-1')]
    expect(await na.getOrLoad('k', loader('before'))).toBe('k@before')
    expect(await na.getOrLoad('ghost', loader('before'))).toBeUndefined()
    expect(await na.getOrLoad('old', loader('before'), { ttlMs: 300 })).toBe('old@before')
    expect(await nb.getOrLoad('k', loader('unused'))).toBe('k@before') // from L2, now in b's L1
    expect(await a.getOrLoad('k', loader('root'))).toBe('k@root') // same key at the root: its own entry
    expect(await a.namespace('tenant-2').getOrLoad('k', loader('other'))).toBe('k@other')
    await sleep(400) // 'old' is past its TTL now, inside the stale-while-revalidate grace (60 s by default)
    loads.length = 0

    expect(await nb.clear()).toEqual({ generation: 1, published: true })

    // a learns the new generation from the bus: its L1 copy of 'k' is not found any more
    await expect.poll(() => na.get('k')).toBeUndefined()
    expect(await na.getOrLoad('k', loader('after'))).toBe('k@after')
    expect(await nb.getOrLoad('k', loader('unused'))).toBe('k@after')
    expect(await na.getOrLoad('ghost', loader('after'))).toBeUndefined() // the negative entry is gone: loaded again
    expect(await nb.getOrLoad('old', loader('after'))).toBe('old@after') // not served stale
    expect(loads).toEqual(['after:k', 'after:ghost', 'after:old'])

    // untouched: the root and the other namespace
    expect(await b.getOrLoad('k', loader('unused'))).toBe('k@root')
    expect(await b.namespace('tenant-2').getOrLoad('k', loader('unused'))).toBe('k@other')
    expect(loads).toHaveLength(3)
  })

  it('a load that began before the clear never shows its value afterwards', async () => {
    const [a, b] = await pair('slow')
    let release = () => {}
    const slow = a.namespace('n').getOrLoad('k', async () => {
      await new Promise<void>((resolve) => {
        release = resolve
      })
      return 'before-clear'
    })
    await sleep(50) // the load holds the lock now
    await b.namespace('n').clear()
    release()
    expect(await slow).toBe('before-clear') // its caller still gets what it loaded
    await sleep(50)
    for (const cache of [a, b])
      expect(await cache.namespace('n').getOrLoad('k', async () => 'after-clear')).toBe('after-clear')
  })

  it('a clear costs one INCR and one PUBLISH, however many keys the namespace holds', async () => {
    const server = await PrivateRedis.start()
    const admin = await privateRedisClient(server)
    const client = createRedisClient(server.url, { commandTimeoutMs: 1000 })
    client.on('error', () => {})
    const cache = createCache<string>({ redis: client, name: 'big', redisTimeoutMs: 1000 })
    try {
      await cache.ready
      const ns = cache.namespace('n')
      await ns.getManyOrLoad(
        Array.from({ length: 1000 }, (_, i) => `k${i}`),
        (keys) => keys.map((k) => k),
      )
      await admin.config('RESETSTAT')
      expect(await ns.clear()).toEqual({ generation: 1, published: true })
      expect(await commandCalls(admin)).toEqual({ incr: 1, publish: 1 })
      expect(await ns.get('k1')).toBeUndefined()
    } finally {
      cache.close()
      client.disconnect()
      admin.disconnect()
      await server.destroy()
    }
  })

  it('names are validated; keys may not start with \\0 (reserved for namespaced ids)', async () => {
    const [a] = await pair('names')
    expect(() => a.namespace('a:b')).toThrow(InvalidArgumentError)
    await expect(a.getOrLoad('\u0000x', async () => 'v')).rejects.toThrow(InvalidArgumentError)
  })

  it('two processes: a clear in one makes the other load again', async () => {
    const group = new WorkerGroup(redis, `${prefix}-procs`, 2, {})
    try {
      await group.ready()
      const [first] = await group.send({ op: 'swarm', key: 'k', namespace: 'ns', callers: 5, only: 0 }, 1)
      expect(first!.values).toEqual(['k#1'])
      const [second] = await group.send({ op: 'swarm', key: 'k', namespace: 'ns', callers: 5, only: 1 }, 1)
      expect(second!.values).toEqual(['k#1']) // from L2, now in worker 1's L1 too
      const [cleared] = await group.send({ op: 'clear', key: '', namespace: 'ns', only: 0 }, 1)
      expect(cleared!.result).toEqual({ generation: 1, published: true })
      await sleep(100) // the bus message reaches worker 1
      const [after] = await group.send({ op: 'swarm', key: 'k', namespace: 'ns', callers: 5, only: 1 }, 1)
      expect(after!.values).toEqual(['k#2'])
      const [root] = await group.send({ op: 'swarm', key: 'k', callers: 1, only: 1 }, 1)
      expect(root!.values).toEqual(['k#3']) // the root's 'k' is another entry
    } finally {
      await group.stop()
      await deleteByPrefix(redis, `${prefix}-procs`)
    }
  }, 90_000)
})

describe('a namespace whose generation cannot be read (Redis down)', () => {
  it('loads without caching, get answers undefined, set and clear throw StoreUnavailableError', async () => {
    const server = await PrivateRedis.start()
    const client = createRedisClient(server.url, { commandTimeoutMs: 200 })
    client.on('error', () => {})
    const cache = createCache<string>({ redis: client, name: 'down', redisTimeoutMs: 200 })
    try {
      await cache.ready
      await server.kill()
      const ns = cache.namespace('n')
      let loads = 0
      const loader = async (key: string) => {
        loads++
        return `${key}!`
      }
      expect(await ns.getOrLoad('k', loader)).toBe('k!')
      expect(await ns.getOrLoad('k', loader)).toBe('k!')
      expect(loads).toBe(2) // nothing cached: the generation (and so the key) is unknown
      expect(await ns.get('k')).toBeUndefined()
      await expect(ns.set('k', 'v')).rejects.toBeInstanceOf(StoreUnavailableError)
      await expect(ns.clear()).rejects.toBeInstanceOf(StoreUnavailableError)
      expect(await ns.invalidate('k')).toEqual({ retrying: [], published: false })
    } finally {
      cache.close()
      client.disconnect()
      await server.destroy()
    }
  })
})
