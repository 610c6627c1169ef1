// Client tracking on Redis Cluster is not supported (it would need a tracked and an invalidation
// connection per master and a flush per slot moved): ClientTracking must say so and open nothing,
// and LiveCounts must keep its maxAgeMs bound there, exact as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ClientTracking, CountsReader, Interactions, LiveCounts } from '../../src/index.js'
import { deleteByPrefix, uniquePrefix } from '../support/redis.js'
import { type ClusterTarget, clusterTarget } from './cluster_target.js'

let target: ClusterTarget
const prefix = uniquePrefix('clustertrack')

beforeAll(async () => {
  target = await clusterTarget()
}, 120_000)

afterAll(async () => {
  await deleteByPrefix(target.client(), prefix)
  await target.close()
})

describe('client tracking on Redis Cluster', () => {
  it('is unsupported: no connection opened; LiveCounts reads once per maxAgeMs', async () => {
    const redis = target.client()
    const connectionsBefore = await trackingConnections(redis)
    const tracking = new ClientTracking(redis)
    expect(tracking.state).toBe('unsupported')
    expect(await tracking.whenEstablished(100)).toBe(false)
    expect(tracking.begin(['k'])).toBeUndefined()
    expect(await trackingConnections(redis)).toBe(connectionsBefore)

    const interactions = new Interactions(redis, { prefix, partitions: 4 })
    await redis.set(interactions.keys.epoch(), 'e1')
    await interactions.setLiked('1', '10', true)
    let clock = 1_000_000
    const live = new LiveCounts({
      reader: new CountsReader({ redis, prefix, partitions: 4, timeoutMs: 500 }),
      fallback: async () => undefined,
      tracking,
      now: () => clock,
    })
    const reads = await Promise.all(Array.from({ length: 100 }, () => live.read(['1'])))
    for (const read of reads) expect(read.counts.get('1')).toMatchObject({ likes: 1, stale: false })
    expect(live.stats).toMatchObject({ redisBatches: 1, trackedHits: 0 })
    await interactions.setLiked('1', '11', true)
    clock += 999
    expect((await live.read(['1'])).counts.get('1')?.likes).toBe(1) // within maxAgeMs
    clock += 1
    expect((await live.read(['1'])).counts.get('1')?.likes).toBe(2)
    expect(live.stats.redisBatches).toBe(2)
    live.close()
    tracking.close()
  })
})

/** Connections named by ClientTracking, over every master. */
async function trackingConnections(redis: ReturnType<ClusterTarget['client']>): Promise<number> {
  let n = 0
  for (const node of redis.nodes('master')) {
    const list = (await node.client('LIST')) as string
    n += (list.match(/name=floodgate-tracking:/g) ?? []).length
  }
  return n
}
