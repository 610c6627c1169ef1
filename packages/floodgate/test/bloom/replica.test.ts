import { until } from '@floodgate/test-support'
import { afterAll, describe, expect, it } from 'vitest'
import { BloomFilter, BloomReplica, type BloomReplicaReloadReason, KeySpace } from '../../src/index.js'
import { blockLoop } from '../support/busy_loop.js'
import { chunks, range } from '../support/items.js'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const keySpace = new KeySpace(uniquePrefix('bloom-replica'))
const BITS = 10_000_000
const HASHES = 7
let n = 0
const replicas: BloomReplica[] = []

const filter = (name: string) => new BloomFilter({ redis, keySpace, name, bits: BITS, hashes: HASHES })

async function liveReplica(bloom: BloomFilter): Promise<BloomReplica> {
  const replica = new BloomReplica({ filter: bloom })
  replicas.push(replica)
  await replica.start()
  expect(replica.state).toBe('live')
  return replica
}

afterAll(async () => {
  for (const replica of replicas) replica.close()
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
})

describe('BloomReplica', () => {
  it('answers like the filter in Redis for 10k present and 10k absent items (m = 10M bits)', async () => {
    const bloom = filter(`r${n++}`)
    const present = range(0, 10_000, 'video')
    const absent = range(0, 10_000, 'missing')
    await bloom.rebuild(chunks(present, 2_000))
    const replica = await liveReplica(bloom)

    const local = await replica.mightContain([...present, ...absent])
    expect(local).toEqual(await bloom.mightContain([...present, ...absent]))
    expect(local.slice(0, present.length).every(Boolean)).toBe(true)
    // p ≈ 1e-6 at this fill: (nearly) every absent item is answered from the bits
    expect(local.slice(present.length).filter((a) => !a).length).toBeGreaterThan(9_990)
    expect(replica.stats.remote).toBe(0)
    expect(replica.syncs).toBe(1)
  })

  it('sees an add made by another process, and a rebuild that switches the generation', async () => {
    const name = `r${n++}`
    const bloom = filter(name)
    await bloom.rebuild(chunks(range(0, 100, 'old'), 100))
    const replica = await liveReplica(bloom)
    const before = replica.position

    const adder = spawnWorker(new URL('./replica_adder.worker.ts', import.meta.url), [
      keySpace.prefix,
      name,
      'new',
      '20',
      String(BITS),
      String(HASHES),
    ])
    expect(await adder.waitFor((m) => (m as { done?: boolean }).done === true, 60_000)).toEqual({
      done: true,
      failed: 0,
    })
    await adder.exited
    expect((await replica.mightContain(range(0, 20, 'new'))).every(Boolean)).toBe(true)
    expect(replica.position).toEqual({ generation: before.generation, appliedSeq: before.appliedSeq + 20 })

    const reloads: BloomReplicaReloadReason[] = []
    replica.on('reload', ({ reason }) => reloads.push(reason))
    const rebuilt = await filter(name).rebuild(chunks(range(0, 50, 'fresh'), 50))
    await until(() => replica.position.generation === rebuilt.generation && replica.state === 'live', {
      timeoutMs: 10_000,
      everyMs: 10,
      what: 'replica live on the rebuilt generation',
    })
    expect(reloads).toContain('generation')
    const answers = await replica.mightContain([...range(0, 50, 'fresh'), ...range(0, 100, 'old')])
    expect(answers.slice(0, 50).every(Boolean)).toBe(true)
    // the old items are gone from the new generation
    expect(answers.slice(50).filter(Boolean).length).toBeLessThan(3)
    expect(replica.stats.remote).toBe(0)
  })

  it('create in one process, read at once in another: 2,000 rounds under CPU load, no false "absent"', async () => {
    const name = `r${n++}`
    const bloom = filter(name)
    await bloom.rebuild(chunks(range(0, 1_000, 'seed'), 1_000))
    const replica = await liveReplica(bloom)
    const hogs = [0, 1].map(() => spawnWorker(new URL('./cpu_hog.worker.ts', import.meta.url)))
    // this process stalls too, as a saturated instance does: 5 ms blocked every 10 ms
    const stall = setInterval(() => blockLoop(5), 10)
    const falseAbsent: string[] = []
    const queries: Promise<void>[] = []
    try {
      const adder = spawnWorker(new URL('./replica_adder.worker.ts', import.meta.url), [
        keySpace.prefix,
        name,
        'created',
        '2000',
        String(BITS),
        String(HASHES),
      ])
      const done = await adder.waitFor((message) => {
        const { added } = message as { added?: string }
        if (added !== undefined)
          queries.push(
            replica.mightContain([added, `never:${added}`]).then(([answer]) => {
              if (answer !== true) falseAbsent.push(added)
            }),
          )
        return (message as { done?: boolean }).done === true
      }, 240_000)
      await Promise.all(queries)
      expect(done).toEqual({ done: true, failed: 0 })
    } finally {
      clearInterval(stall)
      for (const hog of hogs) hog.child.kill('SIGKILL')
    }
    expect(queries.length).toBe(2_000)
    expect(falseAbsent).toEqual([])
    console.log('causality run', {
      syncs: replica.syncs,
      catchUpWaits: replica.stats.catchUpWaits,
      remoteItems: replica.stats.remote,
      localAbsent: replica.stats.localAbsent,
    })
  }, 300_000)
})
