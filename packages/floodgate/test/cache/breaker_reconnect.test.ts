import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CACHE_DEFAULTS, ClientTracking, createCache, createRedisClient } from '../../src/index.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// A private redis-server: the test kills it and starts it again, empty (issue 30's avalanche).
let server: PrivateRedis
let admin: Redis

beforeAll(async () => {
  server = await PrivateRedis.start()
  admin = await privateRedisClient(server)
})
afterAll(async () => {
  admin.disconnect()
  await server.destroy()
})

// How soon after its client is ready again the cache must be back on L2; far below the
// default cool-down (5 s), which is what it waited for before.
const backWithinMs = 1_000

describe('L2 breaker opened by a Redis loss', () => {
  for (const tracking of [false, true]) {
    it(`probes as soon as the client reconnects, not after the cool-down (L1 ${tracking ? 'tracked' : 'off'})`, async () => {
      const client = createRedisClient(server.url)
      const clientTracking = tracking
        ? new ClientTracking(client, { connectionName: 'reconnect' })
        : undefined
      const prefix = `brc${tracking ? 't' : ''}`
      const cache = createCache<string>({
        redis: client,
        name: 'r',
        prefix,
        // a tracked L1 keeps what it read; untracked, every read goes to L2
        l1: tracking ? { ttlMs: 1, tracking: clientTracking } : false,
      })
      expect(CACHE_DEFAULTS.breaker.coolDownMs).toBeGreaterThan(4 * backWithinMs)
      await cache.ready
      let running = true
      const reads = (async () => {
        for (let i = 0; running; i++) {
          // a new key each time: an L1 entry would answer without L2
          await cache.getOrLoad(`k${i}`, async (key) => `v:${key}`)
          await sleep(10)
        }
      })()
      try {
        await until(() => admin.exists(`${prefix}:c:r:{k0}`).then((n) => n === 1), { everyMs: 10 })

        await server.kill()
        await until(() => cache.breaker.state === 'open', { everyMs: 5, what: 'breaker open' })
        let readyAt = Number.NaN
        client.once('ready', () => {
          readyAt = performance.now()
        })
        await server.start()
        await until(() => !Number.isNaN(readyAt), { everyMs: 5, what: 'client ready again' })

        // back on L2: the breaker closed and a read's fill landed in the new, empty Redis
        const valueKeys = () =>
          admin.keys(`${prefix}:c:r:{k*}`).then((keys) => keys.filter((k) => k.endsWith('}')))
        await until(
          async () =>
            cache.breaker.state === 'closed' &&
            // the admin client may still be reconnecting
            (await valueKeys().catch(() => [])).length > 0,
          {
            timeoutMs: backWithinMs,
            everyMs: 10,
            what: `L2 read and filled within ${backWithinMs} ms of ready`,
          },
        )
        expect(performance.now() - readyAt).toBeLessThan(backWithinMs)
      } finally {
        running = false
        await reads
        cache.close()
        clientTracking?.close()
        client.disconnect()
      }
    }, 20_000)
  }
})
