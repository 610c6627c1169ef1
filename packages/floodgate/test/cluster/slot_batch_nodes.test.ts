// Issue 26: a read over every interaction partition (rankings, a page of counts, the flush's
// stream reads) sends one pipeline per master on Redis Cluster, not one per partition: with the
// default 300 partitions on 3 masters, 3 pipelines.
import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { InteractionKeys } from '../../src/index.js'
import { SlotBatch } from '../../src/rankings/slot_batch.js'
import { type ClusterTarget, clusterTarget } from './cluster_target.js'

let target: ClusterTarget
let cluster: Cluster

beforeAll(async () => {
  target = await clusterTarget()
  cluster = target.client(5000)
  if (cluster.status !== 'ready') await new Promise((resolve) => cluster.once('ready', resolve))
}, 60_000)

afterAll(async () => {
  await target?.close()
})

it('sends one pipeline per master for 300 partitions, replies in order', async () => {
  const keys = new InteractionKeys('slotbatch-nodes') // never written: EXISTS answers 0
  const masters = new Set(Object.values(cluster.slots).map((nodes) => nodes[0]))
  let pipelines = 0
  const counting = new Proxy(cluster, {
    get(t, prop) {
      const value = Reflect.get(t, prop, t)
      if (prop !== 'pipeline' || typeof value !== 'function') return value
      return (...args: unknown[]) => {
        pipelines++
        return value.apply(t, args)
      }
    },
  })
  const batch = new SlotBatch(counting)
  for (const p of keys.allPartitions()) {
    const key = keys.stream(p)
    batch.add(key, (pipe) => pipe.exists(key))
    batch.add(key, (pipe) => pipe.call('ECHO', String(p)))
  }
  const replies = await batch.exec('test read')
  expect(replies).toEqual(keys.allPartitions().flatMap((p) => [0, String(p)]))
  expect(pipelines).toBeLessThanOrEqual(masters.size)
})
