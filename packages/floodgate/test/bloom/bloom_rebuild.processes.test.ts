import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { BloomFilter, KeySpace } from '../../src/index.js'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, testRedis, uniquePrefix } from '../support/redis.js'

const redis = testRedis()
const keySpace = new KeySpace(uniquePrefix('bloom-procs'))

afterAll(async () => {
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
})

interface Done {
  done: true
  label: string
  added: number
  failed: number
}

describe('BloomFilter rebuild with concurrent adds from other processes', () => {
  it('never loses an add: every item whose add resolved is "maybe" after several rebuilds', async () => {
    const name = 'videos'
    const bloom = new BloomFilter({ redis, keySpace, name, bits: 200_000, hashes: 7, shards: 3 })
    const db = keySpace.plain('db', name)
    let committedAfterSnapshot = 0
    // the source reads what was committed when it starts (a snapshot), slowly, in chunks
    async function* source(): AsyncIterable<string[]> {
      const snapshot = await redis.llen(db)
      for (let from = 0; from < snapshot; from += 100) {
        yield await redis.lrange(db, from, Math.min(from + 100, snapshot) - 1)
        await sleep(5)
      }
      committedAfterSnapshot += (await redis.llen(db)) - snapshot
    }
    await bloom.rebuild(source())

    const workers = ['p', 'q'].map((label) =>
      spawnWorker(new URL('./adder.worker.ts', import.meta.url), [keySpace.prefix, name, label]),
    )
    await Promise.all(workers.map((w) => w.waitFor((m) => (m as { ready?: boolean }).ready === true)))
    await sleep(100)
    for (let i = 0; i < 4; i++) await bloom.rebuild(source())
    await redis.set(keySpace.plain('stop', name), '1')
    const results = (await Promise.all(
      workers.map((w) => w.waitFor((m) => (m as Partial<Done>).done === true)),
    )) as Done[]
    await Promise.all(workers.map((w) => w.exited))

    // adds really raced the rebuilds: items landed after the sources' snapshots
    expect(committedAfterSnapshot).toBeGreaterThan(5)
    const items: string[] = []
    for (const r of results) {
      expect(r.failed).toBe(0)
      expect(r.added).toBeGreaterThan(50)
      for (let i = 0; i < r.added; i++) items.push(`${r.label}:${i}`)
    }
    const answers = await bloom.mightContain(items)
    const lost = items.filter((_, i) => !answers[i])
    expect(lost).toEqual([])
    // and the filter is really answering (not failing open)
    const absent = await bloom.mightContain(Array.from({ length: 1000 }, (_, i) => `absent:${i}`))
    expect(absent.filter(Boolean).length).toBeLessThan(50)
    expect(bloom.stats.failOpenRedisError + bloom.stats.failOpenNotReady).toBe(0)
  })
})
