import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import {
  InvalidArgumentError,
  KeySpace,
  LockAbortedError,
  type LockLostError,
  LockTimeoutError,
  Mutex,
  StoreUnavailableError,
} from '../../src/index.js'
import {
  deadRedisClient,
  deleteByPrefix,
  readyProductionClient,
  testRedisClient,
  uniquePrefix,
} from '../support/redis.js'

const redis = testRedisClient()
const space = new KeySpace(uniquePrefix('lock'))
let n = 0
const fresh = (options?: ConstructorParameters<typeof Mutex>[2]) =>
  Mutex.named(redis, space, `m${n++}`, options)

afterAll(async () => {
  await deleteByPrefix(redis, space.prefix)
  redis.disconnect()
})

describe('Mutex', () => {
  it('tryAcquire: a 128-bit token, fencing tokens 1, 2; null while held', async () => {
    const mutex = fresh()
    const a = await mutex.tryAcquire()
    if (!a) throw new Error('not acquired')
    expect(a.token).toMatch(/^[0-9a-f]{32}$/)
    expect(a?.fencingToken).toBe(1)
    expect(await redis.get(mutex.keys.lock)).toBe(a?.token)
    expect(await mutex.tryAcquire()).toBeNull()
    expect(await a?.release()).toBe(true)
    expect(a?.signal.aborted).toBe(true)
    expect((a.signal.reason as LockLostError).code).toBe('FLOODGATE_LOCK_RELEASED')
    const b = await mutex.tryAcquire()
    expect(b?.fencingToken).toBe(2)
    expect(b?.token).not.toBe(a?.token)
    await b?.release()
  })

  it('keys share one hash tag; keys without one are refused', () => {
    const mutex = fresh()
    expect(mutex.keys.lock).toMatch(/\{m\d+\}$/)
    expect(mutex.keys.fence).toBe(`${mutex.keys.lock}:fence`)
    expect(() => new Mutex(redis, { lock: 'a:{x}', fence: 'a:{y}:fence' })).toThrow(InvalidArgumentError)
    expect(() => fresh({ ttlMs: 0 })).toThrow(InvalidArgumentError)
    expect(() => fresh({ ttlMs: 1.5 })).toThrow(InvalidArgumentError)
  })

  it('a holder whose lock expired and was taken learns it, and its late extend/release leave the new holder alone', async () => {
    const mutex = fresh({ ttlMs: 2000 })
    const old = await mutex.tryAcquire()
    if (!old) throw new Error('not acquired')
    // the lock vanishes under the old holder (expiry seen by Redis first) and another takes it
    await redis.del(mutex.keys.lock)
    const next = await new Mutex(redis, mutex.keys, { ttlMs: 10_000 }).tryAcquire()
    expect(next?.fencingToken).toBe(old.fencingToken + 1)
    expect(await old.extend()).toBe(false)
    expect(old.signal.aborted).toBe(true)
    expect((old.signal.reason as LockLostError).reason).toBe('lost')
    expect(await old.release()).toBe(false)
    expect(await redis.get(mutex.keys.lock)).toBe(next?.token)
    expect(await redis.pttl(mutex.keys.lock)).toBeGreaterThan(5000)
    await next?.release()
  })

  it('without a watchdog the signal aborts (expired) when the TTL passes, and a late release does not touch the next holder', async () => {
    const mutex = fresh({ ttlMs: 150 })
    const old = await mutex.tryAcquire()
    if (!old) throw new Error('not acquired')
    const aborted = new Promise((resolve) => old.signal.addEventListener('abort', resolve))
    await aborted
    expect((old.signal.reason as LockLostError).reason).toBe('expired')
    await sleep(20)
    const next = await mutex.acquire({ waitMs: 1000 })
    expect(await old.extend()).toBe(false)
    expect(await old.release()).toBe(false)
    expect(await redis.get(mutex.keys.lock)).toBe(next.token)
    await next.release()
  })

  it('extend() resets the TTL while the lock is ours', async () => {
    const mutex = fresh({ ttlMs: 300 })
    const lease = await mutex.tryAcquire()
    expect(await lease?.extend(20_000)).toBe(true)
    expect(await redis.pttl(mutex.keys.lock)).toBeGreaterThan(10_000)
    await sleep(400) // past the original TTL: the local deadline moved too
    expect(lease?.signal.aborted).toBe(false)
    await expect(lease?.extend(0)).rejects.toBeInstanceOf(InvalidArgumentError)
    expect(await lease?.release()).toBe(true)
  })

  it('the watchdog keeps the lock alive well past its TTL, and release stops it', async () => {
    const mutex = fresh({ ttlMs: 300, watchdog: true })
    const lease = await mutex.tryAcquire()
    if (!lease) throw new Error('not acquired')
    await sleep(1000) // over 3× the TTL
    expect(lease.signal.aborted).toBe(false)
    expect(await redis.get(mutex.keys.lock)).toBe(lease.token)
    expect(await mutex.tryAcquire()).toBeNull()
    expect(await lease.release()).toBe(true)
    // a watchdog still running would renew a key holding its token: plant one and watch its TTL run down
    await redis.set(mutex.keys.lock, lease.token, 'PX', 10_000)
    await sleep(300) // two renewal periods
    expect(await redis.pttl(mutex.keys.lock)).toBeLessThan(10_000 - 250)
    await redis.del(mutex.keys.lock)
  })

  it('the watchdog aborts the signal when it finds another token', async () => {
    const mutex = fresh({ ttlMs: 600, watchdog: true })
    const lease = await mutex.tryAcquire()
    if (!lease) throw new Error('not acquired')
    await redis.set(mutex.keys.lock, 'intruder', 'PX', 5000)
    const reason = await new Promise((resolve) =>
      lease.signal.addEventListener('abort', () => resolve(lease.signal.reason)),
    )
    expect((reason as LockLostError).reason).toBe('lost')
    expect(await redis.get(mutex.keys.lock)).toBe('intruder')
    expect(await lease.release()).toBe(false)
    expect(await redis.get(mutex.keys.lock)).toBe('intruder')
  })

  it('the watchdog retries through Redis errors, then aborts (expired) before the TTL would have passed', async () => {
    const client = await readyProductionClient(200) // no offline queue: after disconnect() renewals fail at once
    const mutex = Mutex.named(client, space, `m${n++}`, { ttlMs: 300, watchdog: true })
    const lease = await mutex.tryAcquire()
    if (!lease) throw new Error('not acquired')
    const start = Date.now()
    client.disconnect() // every renewal now fails
    const reason = await new Promise((resolve) =>
      lease.signal.addEventListener('abort', () => resolve(lease.signal.reason)),
    )
    const elapsed = Date.now() - start
    expect((reason as LockLostError).reason).toBe('expired')
    expect((reason as LockLostError).cause).toBeInstanceOf(StoreUnavailableError)
    expect(elapsed).toBeGreaterThan(100) // it did not give up at the first failure (tick at ~100 ms)
    expect(elapsed).toBeLessThan(1500) // ~270 ms when idle; generous for a loaded machine
  })

  it('acquire waits for a release', async () => {
    const mutex = fresh()
    const first = await mutex.tryAcquire()
    setTimeout(() => void first?.release(), 100)
    const second = await mutex.acquire({ waitMs: 3000 })
    expect(second.fencingToken).toBe(2)
    await second.release()
  })

  it('acquire times out with LockTimeoutError', async () => {
    const mutex = fresh()
    const held = await mutex.tryAcquire()
    const start = Date.now()
    const error = await mutex.acquire({ waitMs: 150 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(LockTimeoutError)
    expect((error as LockTimeoutError).code).toBe('FLOODGATE_LOCK_TIMEOUT')
    expect(Date.now() - start).toBeGreaterThanOrEqual(145)
    expect(Date.now() - start).toBeLessThan(1500)
    const once = await mutex.acquire({ waitMs: 0 }).catch((e: unknown) => e)
    expect(once).toBeInstanceOf(LockTimeoutError)
    await held?.release()
  })

  it('acquire stops when its signal aborts', async () => {
    const mutex = fresh()
    const held = await mutex.tryAcquire()
    const error = await mutex.acquire({ waitMs: 5000, signal: AbortSignal.timeout(100) }).catch((e) => e)
    expect(error).toBeInstanceOf(LockAbortedError)
    expect((error as LockAbortedError).code).toBe('FLOODGATE_LOCK_ABORTED')
    await held?.release()
  })

  it('withLock runs the function under the lock and releases it, also when the function throws', async () => {
    const mutex = fresh()
    const token = await mutex.withLock(async (lease) => {
      expect(await mutex.tryAcquire()).toBeNull()
      return lease.fencingToken
    })
    expect(token).toBe(1)
    expect(await redis.exists(mutex.keys.lock)).toBe(0)
    await expect(
      mutex.withLock(async () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(await redis.exists(mutex.keys.lock)).toBe(0)
  })

  it('tryAcquire throws StoreUnavailableError when Redis is unreachable', async () => {
    const dead = deadRedisClient()
    const mutex = Mutex.named(dead, space, 'dead')
    await expect(mutex.tryAcquire()).rejects.toBeInstanceOf(StoreUnavailableError)
    await expect(mutex.acquire()).rejects.toBeInstanceOf(StoreUnavailableError)
  })
})
