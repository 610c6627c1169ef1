import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BloomFailOpenEvent, BloomFilter, KeySpace, StoreUnavailableError } from '../../src/index.js'
import { floodgateRedisOptions } from '../../src/redis/index.js'
import { PrivateRedis } from '../support/redis_server.js'

let server: PrivateRedis
let redis: Redis

beforeAll(async () => {
  server = await PrivateRedis.start()
  redis = new Redis(server.url, floodgateRedisOptions({ commandTimeoutMs: 200 }))
  redis.on('error', () => undefined) // connection errors are expected here
  await waitReady()
})

async function waitReady(): Promise<void> {
  for (let i = 0; i < 100 && redis.status !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50))
  expect(redis.status).toBe('ready')
}

afterAll(async () => {
  redis.disconnect()
  await server.destroy()
})

describe('BloomFilter when Redis fails', () => {
  it('answers "maybe" while Redis is down, add throws after its retries, and a data loss means "not ready"', async () => {
    const bloom = new BloomFilter({
      redis,
      keySpace: new KeySpace('fg'),
      name: 'outage',
      bits: 10_000,
      hashes: 4,
      addRetryBaseMs: 10,
    })
    const events: BloomFailOpenEvent[] = []
    bloom.on('failOpen', (e) => events.push(e))
    await bloom.rebuild(
      (async function* () {
        yield ['a', 'b']
      })(),
    )
    expect(await bloom.mightContain(['a', 'zzz'])).toEqual([true, false])

    await server.kill()
    expect(await bloom.mightContain(['zzz', 'yyy'])).toEqual([true, true])
    expect(events.at(-1)?.reason).toBe('redis-error')
    expect(bloom.stats.failOpenRedisError).toBe(1)
    const error = await bloom.add(['c']).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(StoreUnavailableError)
    expect(bloom.stats.addRetries).toBe(2)

    await server.start() // no persistence: the filter is gone
    await waitReady()
    expect(await bloom.mightContain(['zzz'])).toEqual([true])
    expect(events.at(-1)?.reason).toBe('not-ready')
  })
})
