// Failover (issue 7): a private Redis Cluster (3 masters, 3 replicas,
// cluster-node-timeout 2 s). While a cache, a rate limiter and a Mutex are in
// use, the master that serves their keys is SIGKILLed; its replica takes over.
// During the gap the cache degrades to the loader and the limiter to its
// fallback; the Mutex fails with StoreUnavailableError; nothing hangs. After
// the failover all three answer from Redis again, and the L1 invalidation bus
// (plain pub/sub, which a cluster broadcasts to every node) still reaches
// another instance.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  type CacheOutcome,
  createCache,
  createRateLimiter,
  createRedisClient,
  KeySpace,
  Mutex,
  RATE_LIMIT_AREA,
  StoreUnavailableError,
} from '../../src/index.js'
import { keySlot } from '../support/key_slot.js'
import { PrivateCluster } from '../support/redis_cluster.js'

const COMMAND_TIMEOUT_MS = 200
let pc: PrivateCluster
let client: Cluster

beforeAll(async () => {
  pc = await PrivateCluster.start({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 2000 })
  // production options: offline queue off, 200 ms per command
  client = createRedisClient(pc.seeds, { commandTimeoutMs: COMMAND_TIMEOUT_MS }) as Cluster
  for (let i = 0; i < 100 && client.status !== 'ready'; i++) await sleep(50)
}, 60_000)

afterAll(async () => {
  client?.disconnect()
  await pc?.destroy()
})

interface Sample {
  atMs: number
  ms: number
  /** cache: the loader ran; limiter: the answer's source; mutex: acquired | the error's class. */
  what: string
}

it('a master dies: a replica takes over, the cache degrades to the loader and recovers, the limiter falls back and recovers', async () => {
  const prefix = 'fo'
  const keySpace = new KeySpace(prefix)
  const cacheKey = 'hot'
  const victimSlot = keySlot(keySpace.tagged('c:video', cacheKey))
  const victim = await pc.masterOf(victimSlot)
  // a limiter key and a lock name whose slots the same master serves
  const sameMaster = async (make: (i: number) => string) => {
    for (let i = 0; ; i++) if ((await pc.masterOf(keySlot(make(i)))) === victim) return i
  }
  const limiterKey = `user${await sameMaster((i) => keySpace.tagged(RATE_LIMIT_AREA, `api:user${i}`))}`
  const lockName = `job${await sameMaster((i) => keySpace.tagged('lock', `job${i}`))}`

  const outcomes: { atMs: number; outcome: CacheOutcome }[] = []
  const cache = createCache<string>({
    redis: client,
    name: 'video',
    prefix,
    l1: false, // every read goes to L2 (or the loader), so the gap is visible
    redisTimeoutMs: COMMAND_TIMEOUT_MS,
    breaker: { failureThreshold: 5, coolDownMs: 300 },
  })
  const limiter = createRateLimiter({
    redis: client,
    prefix: keySpace,
    name: 'api',
    algorithm: 'slidingWindow',
    limit: 1_000_000,
    windowMs: 60_000,
    timeoutMs: COMMAND_TIMEOUT_MS,
    fallback: 'failOpen',
  })
  const mutex = Mutex.named(client, keySpace, lockName, { ttlMs: 2000 })
  await cache.ready
  const t0 = Date.now()
  cache.events.on('outcome', (e) => outcomes.push({ atMs: Date.now() - t0, outcome: e.outcome }))

  const cacheSamples: Sample[] = []
  const limiterSamples: Sample[] = []
  const mutexSamples: Sample[] = []
  const unexpected: unknown[] = []
  let running = true
  const loop = async (samples: Sample[], step: () => Promise<string>) => {
    while (running) {
      const start = Date.now()
      try {
        const what = await step()
        samples.push({ atMs: start - t0, ms: Date.now() - start, what })
      } catch (error) {
        unexpected.push(error)
      }
      await sleep(20)
    }
  }
  const loops = Promise.all([
    loop(cacheSamples, async () => {
      let loaded = false
      const value = await cache.getOrLoad(cacheKey, async () => {
        loaded = true
        return 'value-of-hot'
      })
      if (value !== 'value-of-hot') throw new Error(`wrong value ${value}`)
      return loaded ? 'load' : 'redis'
    }),
    loop(limiterSamples, async () => (await limiter.limit(limiterKey)).source),
    loop(mutexSamples, async () => {
      try {
        const lease = await mutex.tryAcquire()
        if (!lease) return 'busy'
        await lease.release()
        return 'acquired'
      } catch (error) {
        if (error instanceof StoreUnavailableError) return 'StoreUnavailableError'
        throw error
      }
    }),
  ])

  await sleep(1000)
  const killedAt = Date.now() - t0
  await pc.kill(victim)
  await pc.waitForOk(20_000)
  const okAt = Date.now() - t0
  const promoted = await pc.masterOf(victimSlot)
  // the client refreshes its slot map, the breaker half-opens and closes: wait (bounded)
  // until the last 10 answers of every loop came from Redis again
  const last = (samples: Sample[]) => samples.slice(-10).map((s) => s.what)
  const recovered = () =>
    last(cacheSamples).every((w) => w === 'redis') &&
    last(limiterSamples).every((w) => w === 'redis') &&
    last(mutexSamples).every((w) => w === 'acquired') &&
    Math.min(cacheSamples.length, limiterSamples.length, mutexSamples.length) > 0 &&
    [cacheSamples, limiterSamples, mutexSamples].every((s) => (s[s.length - 10]?.atMs ?? 0) > okAt)
  const recoverDeadline = Date.now() + 20_000
  while (!recovered() && Date.now() < recoverDeadline) await sleep(100)
  const recoveredAt = Date.now() - t0
  running = false
  await loops
  cache.close()

  // pub/sub after the failover: a write-through on one instance clears the other's L1
  const writer = createCache<string>({
    redis: client,
    name: 'feed',
    prefix,
    redisTimeoutMs: COMMAND_TIMEOUT_MS,
  })
  const reader = createCache<string>({
    redis: client,
    name: 'feed',
    prefix,
    redisTimeoutMs: COMMAND_TIMEOUT_MS,
  })
  await Promise.all([writer.ready, reader.ready])
  expect(await reader.getOrLoad('k', async () => 'old')).toBe('old') // now in reader's L1
  await writer.set('k', 'new')
  let seen: string | undefined
  for (let i = 0; i < 60 && seen !== 'new'; i++) {
    seen = await reader.getOrLoad('k', async () => 'loader')
    if (seen !== 'new') await sleep(50)
  }
  writer.close()
  reader.close()
  expect(seen).toBe('new')

  expect(promoted).not.toBe(victim)
  expect(await pc.role(promoted)).toBe('master')
  expect(okAt - killedAt).toBeLessThan(15_000)
  expect(unexpected).toEqual([]) // no call threw anything but the documented errors

  const during = (s: Sample) => s.atMs >= killedAt && s.atMs <= okAt
  // before the kill: from Redis (the first read loads; on a loaded box a Redis call may time out
  // and the loader answer, but only with a Redis error reported, and the last reads come from
  // Redis); during the gap: the loader answered, never an error. A read still in flight when the
  // master died may have degraded: only the reads answered before the kill count as before it.
  const beforeKill = cacheSamples.filter((s) => s.atMs + s.ms < killedAt).slice(1)
  expect(last(beforeKill)).toEqual(Array(10).fill('redis'))
  if (beforeKill.some((s) => s.what !== 'redis'))
    expect(outcomes.some((o) => o.atMs < killedAt && o.outcome === 'redis_error')).toBe(true)
  expect(cacheSamples.filter(during).some((s) => s.what === 'load')).toBe(true)
  expect(last(cacheSamples)).toEqual(Array(10).fill('redis'))
  expect(outcomes.some((o) => o.outcome === 'redis_error')).toBe(true)

  expect(new Set(limiterSamples.map((s) => s.what))).toEqual(new Set(['redis', 'failOpen']))
  expect(limiterSamples.filter(during).some((s) => s.what === 'failOpen')).toBe(true)
  expect(last(limiterSamples)).toEqual(Array(10).fill('redis'))

  expect(mutexSamples.filter(during).some((s) => s.what === 'StoreUnavailableError')).toBe(true)
  expect(last(mutexSamples)).toEqual(Array(10).fill('acquired'))

  // nothing hung: every call returned within a few command timeouts
  const slowest = Math.max(...[...cacheSamples, ...limiterSamples, ...mutexSamples].map((s) => s.ms))
  expect(slowest).toBeLessThan(3000)
  console.info(
    `failover: cluster ok ${okAt - killedAt} ms after the kill, answers from Redis again ${recoveredAt - okAt} ms later; ` +
      `${cacheSamples.filter(during).length} cache reads in the gap, ` +
      `${cacheSamples.filter((s) => s.what === 'load').length} loads (${beforeKill.filter((s) => s.what !== 'redis').length} before the kill); slowest call ${slowest} ms`,
  )
}, 60_000)
