import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import type { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  CACHE_DEFAULTS,
  type CacheOutcome,
  ClientTracking,
  createCache,
  createRedisClient,
} from '../../src/index.js'
import { commandCalls } from '../support/command_stats.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// A private redis-server: these tests kill the tracking's connections.
let server: PrivateRedis
let admin: Redis
const closers: (() => void)[] = []

beforeAll(async () => {
  server = await PrivateRedis.start()
  admin = await privateRedisClient(server)
})

afterEach(() => {
  for (const close of closers.splice(0)) close()
})

afterAll(async () => {
  admin.disconnect()
  await server.destroy()
})

let caches = 0

/** A cache on its own client; `tracking` true: its L1 kept by a ClientTracking (named `name`). */
async function cacheWith(options: { tracking: boolean; ttlMs: number; name?: string }) {
  const client = createRedisClient(server.url) // floodgate's defaults
  client.on('error', () => undefined)
  const tracking = options.tracking
    ? new ClientTracking(client, { connectionName: options.name ?? 'l1-test' })
    : undefined
  const cache = createCache<string>({
    redis: client,
    name: 't',
    prefix: `l1t${caches++}`,
    redisTimeoutMs: 1000,
    l1: { ttlMs: options.ttlMs, tracking },
  })
  closers.push(() => {
    cache.close()
    tracking?.close()
    client.disconnect()
  })
  await cache.ready
  if (tracking) expect(await tracking.whenEstablished(5_000)).toBe(true)
  const outcomes: CacheOutcome[] = []
  cache.events.on('outcome', (e) => outcomes.push(e.outcome))
  return { cache, tracking, outcomes }
}

const valueKey = (prefix: string, key: string) => `${prefix}:c:t:{${key}}`

describe('L1 kept by Redis client-side caching (l1.tracking)', () => {
  it('keeps an entry read from L2 past the L1 TTL, and drops it when Redis says its key changed', async () => {
    const { cache, outcomes } = await cacheWith({ tracking: true, ttlMs: 50 })
    await cache.set('k', 'v1') // L2 only after this: the next read is an L2 hit, on the tracked connection
    cache.local?.delete(['k'])
    expect(await cache.getOrLoad('k', () => 'unused')).toBe('v1')
    expect(outcomes).toEqual(['l2_hit'])
    await sleep(200) // 4× the L1 TTL
    expect(await cache.getOrLoad('k', () => 'unused')).toBe('v1')
    expect(outcomes).toEqual(['l2_hit', 'l1_hit'])
    expect(cache.local?.trackedSize).toBe(1)
    // a change no bus message tells of (another writer, an expiry, an eviction): Redis does
    const prefix = (cache as unknown as { stack: { o: { prefix: string } } }).stack.o.prefix
    await admin.del(valueKey(prefix, 'k'))
    const ms = await until(() => cache.local?.get('k', Date.now()) === undefined)
    expect(ms).toBeLessThan(250)
    expect(cache.local?.trackedSize).toBe(0)
    expect(await cache.getOrLoad('k', () => 'v2')).toBe('v2')
  })

  it('L2 hits of one poll phase are one MGET on the tracked connection, each entry kept as tracked', async () => {
    const { cache, outcomes } = await cacheWith({ tracking: true, ttlMs: 50, name: 'l1-batch' })
    const ids = ['a', 'b', 'c', 'd']
    for (const id of ids) await cache.set(id, `v-${id}`)
    cache.local?.delete(ids)
    await admin.config('RESETSTAT')
    const values = await Promise.all(ids.map((id) => cache.getOrLoad(id, () => 'unused')))
    expect(values).toEqual(ids.map((id) => `v-${id}`))
    const calls = await commandCalls(admin)
    expect([calls.mget, calls.get]).toEqual([1, undefined])
    expect(cache.local?.trackedSize).toBe(4)
    await sleep(200) // 4× the L1 TTL: still served, as tracked
    await Promise.all(ids.map((id) => cache.getOrLoad(id, () => 'unused')))
    expect(outcomes).toEqual([...Array(4).fill('l2_hit'), ...Array(4).fill('l1_hit')])
    const prefix = (cache as unknown as { stack: { o: { prefix: string } } }).stack.o.prefix
    await admin.set(valueKey(prefix, 'c'), 'changed elsewhere')
    expect(await until(() => cache.local?.get('c', Date.now()) === undefined)).toBeLessThan(250)
    expect(cache.local?.trackedSize).toBe(3)
  })

  it('without tracking the same entry lives the L1 TTL only (the default)', async () => {
    expect(CACHE_DEFAULTS.l1.trackedMaxAgeMs).toBe(300_000)
    const { cache, outcomes } = await cacheWith({ tracking: false, ttlMs: 50 })
    await cache.set('k', 'v1')
    cache.local?.delete(['k'])
    await cache.getOrLoad('k', () => 'unused')
    await sleep(200)
    await cache.getOrLoad('k', () => 'unused')
    expect(outcomes).toEqual(['l2_hit', 'l2_hit'])
  })

  it('after the invalidation connection drops, serves nothing read past the L1 TTL: a change made meanwhile is read', async () => {
    const { cache, tracking } = await cacheWith({ tracking: true, ttlMs: 100, name: 'l1-drop' })
    await cache.set('k', 'v1')
    cache.local?.delete(['k'])
    expect(await cache.getOrLoad('k', () => 'unused')).toBe('v1')
    expect(cache.local?.trackedSize).toBe(1)
    await sleep(150) // past the L1 TTL: served only because Redis tracks it
    const generation = tracking!.generation
    // only the tracking's invalidation connection (the cache's bus stays up: its reconnect would clear L1 too)
    const list = (await admin.client('LIST')) as string
    const [id] = [...list.matchAll(/^id=(\d+) .* name=l1-drop:invalidate /gm)].map((m) => m[1]!)
    await admin.call('CLIENT', 'KILL', 'ID', id!)
    // changed while nobody hears it (no redirect client): the invalidation is lost
    const writer = await cacheWith({ tracking: false, ttlMs: 60_000 })
    const prefix = (cache as unknown as { stack: { o: { prefix: string } } }).stack.o.prefix
    const bytes = await admin.getBuffer(valueKey(prefix, 'k'))
    await admin.set(
      valueKey(prefix, 'k'),
      Buffer.from(bytes!.toString('latin1').replace('v1', 'v2'), 'latin1'),
    )
    writer.cache.close()
    await until(() => tracking!.generation !== generation)
    // served as untracked: within the L1 TTL of the last pong before the loss, no longer
    await sleep(150)
    expect(cache.local?.get('k', Date.now())).toBeUndefined()
    expect(cache.local?.trackedSize).toBe(0)
    expect(await cache.getOrLoad('k', () => 'unused')).toBe('v2')
    expect(cache.local?.get('k', Date.now())?.value).toBe('v2') // kept untracked, for the L1 TTL
    // and once tracking is back, reads are kept as tracked again
    expect(await tracking!.whenEstablished(5_000)).toBe(true)
    await until(() => tracking!.established)
    cache.local?.delete(['k'])
    expect(await cache.getOrLoad('k', () => 'unused')).toBe('v2')
    expect(cache.local?.trackedSize).toBe(1)
  }, 20_000)

  it('while the invalidation connection is silent past maxSilenceMs, an entry read past the L1 TTL is not served', async () => {
    const { cache, tracking, outcomes } = await cacheWith({
      tracking: true,
      ttlMs: 100,
      name: 'l1-silent',
    })
    await cache.set('k', 'v1')
    cache.local?.delete(['k'])
    await cache.getOrLoad('k', () => 'unused')
    await sleep(150) // past the L1 TTL
    // the process stops hearing Redis (here: the event loop is blocked past maxSilenceMs)
    const end = Date.now() + tracking!.options.maxSilenceMs + 50
    while (Date.now() < end);
    expect(tracking!.established).toBe(false)
    expect(cache.local?.get('k', Date.now())).toBeUndefined()
    expect(await cache.getOrLoad('k', () => 'unused')).toBe('v1')
    expect(outcomes).toEqual(['l2_hit', 'l2_hit'])
  })

  it('an entry read within the L1 TTL is still served once tracking is not valid (a Redis stall leaves L1 as without tracking)', async () => {
    const { cache, tracking, outcomes } = await cacheWith({ tracking: true, ttlMs: 60_000, name: 'l1-keep' })
    await cache.set('k', 'v1')
    cache.local?.delete(['k'])
    await cache.getOrLoad('k', () => 'unused')
    const end = Date.now() + tracking!.options.maxSilenceMs + 50
    while (Date.now() < end);
    expect(tracking!.established).toBe(false)
    expect(await cache.getOrLoad('k', () => 'unused')).toBe('v1')
    expect(outcomes).toEqual(['l2_hit', 'l1_hit'])
  })

  it('an entry read long ago but proven fresh by a pong within the L1 TTL is still served once tracking is silent', async () => {
    const { cache, tracking, outcomes } = await cacheWith({ tracking: true, ttlMs: 3_000, name: 'l1-proven' })
    await cache.set('k', 'v1')
    cache.local?.delete(['k'])
    await cache.getOrLoad('k', () => 'unused')
    await sleep(3_200) // past the L1 TTL of its read; pongs kept proving it fresh
    const end = Date.now() + tracking!.options.maxSilenceMs + 50
    while (Date.now() < end);
    expect(tracking!.established).toBe(false)
    expect(await cache.getOrLoad('k', () => 'unused')).toBe('v1')
    expect(outcomes).toEqual(['l2_hit', 'l1_hit'])
  }, 15_000)
})
