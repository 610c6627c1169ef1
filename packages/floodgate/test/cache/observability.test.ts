import { setTimeout as sleep } from 'node:timers/promises'
import { Registry } from 'prom-client'
import { afterAll, describe, expect, it } from 'vitest'
import { createCache, createRedisClient } from '../../src/index.js'
import { deleteByPrefix, TEST_REDIS_TARGET, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('cache-obs')
const client = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: 1000 })

afterAll(async () => {
  client.disconnect()
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

/** `floodgate_cache_events_total{cache=…}` by outcome, from the registry's text. */
async function outcomes(registry: Registry, cache: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  const pattern = new RegExp(
    `^floodgate_cache_events_total\\{cache="${cache}",outcome="(\\w+)"\\} (\\d+)$`,
    'gm',
  )
  for (const [, outcome, value] of (await registry.metrics()).matchAll(pattern))
    counts[outcome!] = Number(value)
  return counts
}

describe('cache metrics', () => {
  it('counts callers that joined an in-flight load: 23 calls → 23 final outcomes', async () => {
    const registry = new Registry()
    const cache = createCache<string>({
      redis: client,
      prefix,
      name: 'joined',
      registry,
      redisTimeoutMs: 1000,
    })
    await cache.ready
    let loads = 0
    const loader = async () => {
      loads++
      await sleep(100)
      return 'v'
    }
    const values = await Promise.all(Array.from({ length: 23 }, () => cache.getOrLoad('k', loader)))
    cache.close()
    expect(values).toEqual(Array(23).fill('v'))
    expect(loads).toBe(1)
    const counts = await outcomes(registry, 'joined')
    expect(counts).toMatchObject({ load: 1, load_joined: 22 })
    const final = ['l1_hit', 'l2_hit', 'negative_hit', 'bloom_reject', 'stale_served', 'load', 'load_joined']
    expect(final.reduce((sum, outcome) => sum + (counts[outcome] ?? 0), 0)).toBe(23)
  })
})
