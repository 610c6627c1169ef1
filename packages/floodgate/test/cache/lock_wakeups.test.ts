// A lock waiter must end its wait when the holder's fill (or give-up) lands, not at its deadline
// (lockWaitMs 2 s ± 200 ms), also when its wake-up cannot come the usual way (issue 30): its
// cache's pub/sub connection failed its first connect, that connection is down, or the holder's
// claim reply was lost. Two instances (two clients, two caches) on a private redis-server (the
// test kills its pub/sub connections); the one under test reaches Redis through a proxy.
import { setTimeout as sleep } from 'node:timers/promises'
import { ConnectionGate, until } from '@floodgate/test-support'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UNAVAILABLE } from '../../src/cache/l2/l2_store.js'
import { readClaimScript } from '../../src/cache/scripts.js'
import type { CacheStack } from '../../src/cache/stack.js'
import { type Cache, createCache, createRedisClient, DEADLINE_DEFAULTS } from '../../src/index.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'
import { StallingProxy } from '../support/stalling_proxy.js'

const PREFIX = 'lw'
const NAME = 'wake'
/** The holder's load (ms): a woken waiter answers about this long after it began waiting. */
const LOAD_MS = 300
/** Well under the waiter's shortest deadline (lockWaitMs − jitter, 1,800 ms by default). */
const WOKEN_WITHIN_MS = 1_000

let server: PrivateRedis
let admin: Redis
const clients: Redis[] = []
const caches: Cache<string>[] = []
const closers: Array<() => Promise<void>> = []

beforeAll(async () => {
  server = await PrivateRedis.start()
  admin = await privateRedisClient(server)
})

afterAll(async () => {
  for (const cache of caches) cache.close()
  for (const client of clients) client.disconnect()
  for (const close of closers) await close()
  admin.disconnect()
  await server.destroy()
})

/**
 * A cache with the defaults but L1 (every read reaches L2) and `redisTimeoutMs`, on a client of
 * its own at `url`, made once the client is connected (as a service makes its caches): its
 * pub/sub connection comes next. `redisTimeoutMs` defaults to 1 s of idle loop, not 50 ms: on a
 * loaded box a reply can take longer than 50 ms, and a GET or claim that times out makes the
 * reader load on its own, which is not what these tests look at.
 */
async function cacheOn(
  url: string,
  redisTimeoutMs = 1_000,
): Promise<{ cache: Cache<string>; client: Redis }> {
  const client = createRedisClient(url) as Redis
  clients.push(client)
  await until(() => client.status === 'ready', { what: 'the client connected' })
  const cache = createCache<string>({ redis: client, name: NAME, prefix: PREFIX, l1: false, redisTimeoutMs })
  caches.push(cache)
  return { cache, client }
}

/** Starts `holder` loading `key` for LOAD_MS; resolves once its lock is taken in Redis, with the load. */
async function holding(holder: Cache<string>, key: string): Promise<{ load: Promise<string | undefined> }> {
  const load = holder.getOrLoad(key, async () => {
    await sleep(LOAD_MS)
    return 'from the holder'
  })
  await until(async () => (await admin.exists(`${PREFIX}:c:${NAME}:{${key}}:lock`)) === 1, {
    everyMs: 2,
    what: `the lock of ${key}`,
  })
  return { load }
}

/** `waiter`'s getOrLoad of `key` (its own load would say so) and how long it took (ms). */
async function timedRead(waiter: Cache<string>, key: string): Promise<{ value?: string; ms: number }> {
  const started = performance.now()
  const value = await waiter.getOrLoad(key, async () => 'loaded by the waiter')
  return { value, ms: performance.now() - started }
}

describe('a lock waiter wakes when the value lands', () => {
  it('on an instance whose pub/sub connection failed its first connect', async () => {
    const gate = await ConnectionGate.start(server.port)
    closers.push(() => gate.close())
    gate.refuseAfter(1) // the client's own connection passes; the next (the cache's pub/sub) fails
    const waiter = await cacheOn(gate.url)
    await until(() => gate.refused > 0, { what: 'a refused connect' })
    gate.open()
    await until(() => gate.passed >= 2, { what: 'the pub/sub connection through' })
    await waiter.cache.readyWithin(5_000)
    const holder = await cacheOn(server.url)
    await holder.cache.readyWithin(5_000)

    const { load } = await holding(holder.cache, 'first-connect')
    const read = await timedRead(waiter.cache, 'first-connect')
    expect(await load).toBe('from the holder')
    expect(read.value).toBe('from the holder')
    expect(read.ms).toBeLessThan(WOKEN_WITHIN_MS)
  })

  it('on an instance whose pub/sub connection is down (it polls)', async () => {
    const gate = await ConnectionGate.start(server.port)
    closers.push(() => gate.close())
    const waiter = await cacheOn(gate.url)
    await waiter.cache.readyWithin(5_000)
    const holder = await cacheOn(server.url)
    await holder.cache.readyWithin(5_000)
    // the waiter's pub/sub connection drops and cannot come back; its client's connection stays
    gate.refuse()
    await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
    await sleep(50)

    const { load } = await holding(holder.cache, 'bus-down')
    const read = await timedRead(waiter.cache, 'bus-down')
    expect(await load).toBe('from the holder')
    expect(read.value).toBe('from the holder')
    expect(read.ms).toBeLessThan(WOKEN_WITHIN_MS)
    gate.open()
  })

  /**
   * The holder's Redis call runs and takes the lock of `key`, but its reply is held past its
   * deadline (the default, 50 ms of idle loop) and it answers UNAVAILABLE; the replies come late,
   * not never (what a loaded process or network does). The other instance's read of `key` must be
   * woken at once, not at its deadline, and load as the lock holder.
   */
  async function expectWokenAfterLostReply(
    key: string,
    send: (stack: CacheStack<string>) => Promise<unknown>,
  ): Promise<void> {
    const proxy = await StallingProxy.start(server.port)
    closers.push(() => proxy.close())
    const lost = await cacheOn(proxy.url, DEADLINE_DEFAULTS.timeoutMs)
    await lost.cache.readyWithin(5_000)
    const other = await cacheOn(server.url)
    await other.cache.readyWithin(5_000)
    await lost.client.client('SETNAME', `lost-${key}`)
    // in Redis' script cache already: a held NOSCRIPT reply would leave the script unrun
    await admin.script('LOAD', readClaimScript.source)
    proxy.holdReplies(`lost-${key}`)
    const call = send((lost.cache as unknown as { stack: CacheStack<string> }).stack)
    await until(async () => (await admin.get(`${PREFIX}:c:${NAME}:{${key}}:lock`)) === 'lost-token', {
      everyMs: 2,
      what: 'the lost claim run',
    })
    const reading = timedRead(other.cache, key)
    expect(await call).toBe(UNAVAILABLE)
    // the abandon sent after the timeout may need the held replies too (a NOSCRIPT answered by EVAL)
    await sleep(100)
    proxy.releaseReplies()
    const read = await reading
    expect(read.value).toBe('loaded by the waiter')
    expect(read.ms).toBeLessThan(WOKEN_WITHIN_MS)
    // it loaded as the lock holder, so its value is in L2 for the next reader
    expect(await admin.exists(`${PREFIX}:c:${NAME}:{${key}}`)).toBe(1)
  }

  it('when the holder lost its claim reply (the claim ran, its reply came after the deadline)', async () => {
    // it loads without L2 after the timeout, so it will never fill under that lock
    await expectWokenAfterLostReply('lost', (stack) => stack.l2.claim('lost', 'lost-token', 5_000, 'miss'))
  })

  it('when the holder lost its read-claim reply (an L1 miss: the read took the lock, its reply came late)', async () => {
    // the late reply says the lock was taken: given back at once (abandon-2.lua)
    await expectWokenAfterLostReply('lost-read', (stack) =>
      stack.l2.readOrClaim('lost-read', 'lost-token', 5_000),
    )
  })
})
