// An MGET must not span hash slots, and every cache key has its own hash tag: on a cluster the
// L2 reads of a cache stay one GET per key (a batch: one GET per key too), whichever copy of
// ioredis made the Cluster client.
import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CacheOutcome, createCache } from '../../src/index.js'
import { foreignIoredis } from '../support/foreign_ioredis.js'
import { deleteByPrefix, uniquePrefix } from '../support/redis.js'
import { type ClusterTarget, clusterTarget } from './cluster_target.js'

let target: ClusterTarget
const prefix = uniquePrefix('clusterl2')

beforeAll(async () => {
  target = await clusterTarget()
}, 120_000)

afterAll(async () => {
  await deleteByPrefix(target.client(), prefix)
  await target.close()
})

/** 12 values set in L2, read at once (getOrLoad each, then one getManyOrLoad) by a cache without L1. */
async function readAll(redis: Cluster, name: string) {
  const cache = createCache<string>({ redis, prefix, name, l1: false })
  const outcomes: CacheOutcome[] = []
  cache.events.on('outcome', (e) => outcomes.push(e.outcome))
  try {
    await cache.ready
    const ids = Array.from({ length: 12 }, (_, i) => `v${i}`)
    await Promise.all(ids.map((id) => cache.set(id, `value ${id}`)))
    const one = await Promise.all(ids.map((id) => cache.getOrLoad(id, () => 'loaded')))
    const many = await cache.getManyOrLoad(ids, async (keys) => keys.map(() => 'loaded'))
    return { one, many: ids.map((id) => many.get(id)), outcomes, breaker: cache.breaker.state }
  } finally {
    cache.close()
  }
}

describe('L2 reads of a cache on Redis Cluster', () => {
  it('are answered from L2 with this copy of ioredis and with another', async () => {
    const foreign = foreignIoredis()
    const seeds = target.seeds.map((seed) => {
      const [host, port] = seed.split(':')
      return { host: host!, port: Number(port) }
    })
    const theirs = new foreign.Cluster(seeds) // the application's own client, on ioredis' defaults
    try {
      for (const [name, redis] of [
        ['ours', target.client()],
        ['theirs', theirs as unknown as Cluster],
      ] as const) {
        const read = await readAll(redis, name)
        const values = Array.from({ length: 12 }, (_, i) => `value v${i}`)
        expect({ name, one: read.one, many: read.many }).toEqual({ name, one: values, many: values })
        expect(read.outcomes.filter((o) => o !== 'l2_hit')).toEqual([])
        expect(read.breaker).toBe('closed')
      }
    } finally {
      theirs.disconnect()
    }
  })
})
