import { once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type Cache, createCache, createRedisClient } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_URL, testRedis, uniquePrefix } from '../support/redis.js'

// `permit`: a decision in flight (a rate limiter's) that the load and the answer wait for, while the
// cache's own Redis steps go out at once. Two caches of one name stand for two processes. Single
// node: the permit changes no key or script.
const admin = testRedis()
const client = createRedisClient(TEST_REDIS_URL)
const prefix = uniquePrefix('permit')

beforeAll(async () => {
  // the client has no offline queue: a read before 'ready' would find Redis unavailable
  if (client.status !== 'ready') await once(client, 'ready')
})

afterAll(async () => {
  client.disconnect()
  await deleteByPrefix(admin, prefix)
  admin.disconnect()
})

/** A promise settled from outside. */
function deferred() {
  let resolve!: () => void
  let reject!: (reason: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

const lockOf = (name: string, key: string) => `${prefix}:c:${name}:{${key}}:lock`
const cacheOf = (name: string, l1 = false) =>
  createCache<string>({ redis: client, prefix, name, ...(l1 ? {} : { l1: false }) })

/** 'pending' when `promise` has not settled within `ms` (ms). */
const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([
    promise.then(
      () => 'resolved',
      () => 'rejected',
    ),
    sleep(ms).then(() => 'pending'),
  ])

describe('getOrLoad with a permit', () => {
  it('claims the lock at once and calls the loader only once the permit resolves', async () => {
    const cache = cacheOf('claims')
    const permit = deferred()
    const loader = vi.fn(async () => 'loaded')
    const read = cache.getOrLoad('k', loader, { permit: permit.promise })
    await until(() => admin.exists(lockOf('claims', 'k')).then((n) => n === 1), {
      everyMs: 5,
      what: 'the lock claimed before the permit',
    })
    await sleep(20)
    expect(loader).not.toHaveBeenCalled()
    permit.resolve()
    expect(await read).toBe('loaded')
    expect(loader).toHaveBeenCalledTimes(1)
  })

  it('loads nothing on a refused permit, gives the lock back at once and rejects with the reason', async () => {
    const here = cacheOf('refused')
    const elsewhere = cacheOf('refused')
    const permit = deferred()
    const loader = vi.fn(async () => 'not this one')
    const read = here.getOrLoad('k', loader, { permit: permit.promise })
    await until(() => admin.exists(lockOf('refused', 'k')).then((n) => n === 1), { everyMs: 5 })
    // the other process finds the lock held and waits for its wake-up (lockWaitMs: 2 s)
    const started = performance.now()
    const other = elsewhere.getOrLoad('k', async () => 'elsewhere')
    await sleep(30)
    const refusal = new Error('rate limited')
    permit.reject(refusal)
    await expect(read).rejects.toBe(refusal)
    expect(await other).toBe('elsewhere')
    expect(performance.now() - started).toBeLessThan(1_000)
    expect(loader).not.toHaveBeenCalled()
  })

  /**
   * A read whose permit is refused and a read of the same key without one that joins its load
   * (`name`'s lock held meanwhile); `sentFirst` is the first command the pair sent.
   */
  async function refuseWithJoiner(cache: Cache<string>, name: string) {
    const send = vi.spyOn(client, 'sendCommand')
    const permit = deferred()
    const refusedLoader = vi.fn(async () => 'not this one')
    const joinerLoader = vi.fn(async () => 'joiner')
    const refused = cache.getOrLoad('k', refusedLoader, { permit: permit.promise })
    const joiner = cache.getOrLoad('k', joinerLoader)
    await until(() => admin.exists(lockOf(name, 'k')).then((n) => n === 1), { everyMs: 5 })
    const sentFirst = (send.mock.calls[0]?.[0] as unknown as { name: string } | undefined)?.name
    send.mockRestore()
    await sleep(20)
    expect(refusedLoader).not.toHaveBeenCalled()
    const refusal = new Error('rate limited')
    permit.reject(refusal)
    await expect(refused).rejects.toBe(refusal)
    expect(await joiner).toBe('joiner')
    expect(refusedLoader).not.toHaveBeenCalled()
    expect(joinerLoader).toHaveBeenCalledTimes(1)
    return { sentFirst }
  }

  it('lets the calls that joined a refused load read again on their own', async () => {
    const { sentFirst } = await refuseWithJoiner(cacheOf('joined'), 'joined')
    expect(sentFirst).toBe('get') // a new cache reads with a GET, claims after the miss
  })

  it('does the same when the lock is claimed in the L2 read (most recent reads missed)', async () => {
    const cache = cacheOf('read-claim')
    for (let i = 0; i < 40; i++) await cache.getOrLoad(`warm-${i}`, async () => 'warm')
    const { sentFirst } = await refuseWithJoiner(cache, 'read-claim')
    expect(sentFirst).toBe('evalsha') // read-claim-n.lua, no GET first
  })

  it('answers a hit only once the permit resolves, and not when it is refused', async () => {
    const cache = cacheOf('hits', true)
    await cache.getOrLoad('k', async () => 'cached')
    const pending = deferred()
    const waiting = cache.getOrLoad('k', async () => 'loaded', { permit: pending.promise })
    expect(await settledWithin(waiting, 30)).toBe('pending')
    pending.resolve()
    expect(await waiting).toBe('cached')
    const refusal = new Error('rate limited')
    await expect(
      cache.getOrLoad('k', async () => 'loaded', { permit: Promise.reject(refusal) }),
    ).rejects.toBe(refusal)
  })

  it('starts no stale-while-revalidate refresh on a refused permit', async () => {
    const cache = createCache<string>({ redis: client, prefix, name: 'stale', l1: false, ttlMs: 50 })
    await cache.getOrLoad('k', async () => 'old')
    await sleep(80)
    const loader = vi.fn(async () => 'new')
    const refusal = new Error('rate limited')
    await expect(cache.getOrLoad('k', loader, { permit: Promise.reject(refusal) })).rejects.toBe(refusal)
    await sleep(100)
    expect(loader).not.toHaveBeenCalled()
    expect(await cache.getOrLoad('k', loader, { permit: Promise.resolve() })).toBe('old')
    await until(() => loader.mock.calls.length === 1, { everyMs: 5, what: 'the refresh of an admitted read' })
  })
})

describe('getManyOrLoad with a permit', () => {
  it('calls the batch loader only once the permit resolves; a refusal loads nothing', async () => {
    const cache: Cache<string> = cacheOf('many')
    const permit = deferred()
    const loader = vi.fn(async (keys: string[]) => keys.map((k) => `v${k}`))
    const read = cache.getManyOrLoad(['1', '2'], loader, { permit: permit.promise })
    expect(await settledWithin(read, 30)).toBe('pending')
    expect(loader).not.toHaveBeenCalled()
    permit.resolve()
    expect(await read).toEqual(
      new Map([
        ['1', 'v1'],
        ['2', 'v2'],
      ]),
    )
    const refusal = new Error('rate limited')
    const refusedLoader = vi.fn(async (keys: string[]) => keys)
    await expect(cache.getManyOrLoad(['3'], refusedLoader, { permit: Promise.reject(refusal) })).rejects.toBe(
      refusal,
    )
    expect(refusedLoader).not.toHaveBeenCalled()
  })
})
