import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { BloomFilter, KeySpace } from '../../src/index.js'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
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

const PHASES = 4
const BATCHES_PER_PHASE = 25 // 3 items per batch

describe('BloomFilter rebuild with concurrent adds from other processes', () => {
  it('never loses an add: every item whose add resolved is "maybe" after several rebuilds', async () => {
    const name = 'videos'
    const bloom = new BloomFilter({ redis, keySpace, name, bits: 200_000, hashes: 7, shards: 3 })
    const db = keySpace.plain('db', name)
    const round = keySpace.plain('round', name)
    let done = 0
    const afterSnapshot: number[] = []
    // The source reads what was committed when it starts (a snapshot), in chunks. Taking the
    // snapshot opens the next phase of the workers' adds; before it ends, the source waits until
    // adds landed after its snapshot (or the workers finished), so every round races adds
    // whatever the machine's speed: no assertion depends on how many adds fit in some time.
    async function* source(counted: boolean): AsyncIterable<string[]> {
      const snapshot = await redis.llen(db)
      if (counted) await redis.incr(round)
      for (let from = 0; from < snapshot; from += 100) {
        yield await redis.lrange(db, from, Math.min(from + 100, snapshot) - 1)
        await sleep(5)
      }
      const deadline = Date.now() + 30_000
      while (counted && done < 2 && (await redis.llen(db)) < snapshot + 6 && Date.now() < deadline)
        await sleep(5)
      if (counted) afterSnapshot.push((await redis.llen(db)) - snapshot)
    }
    await bloom.rebuild(source(false))

    const workers = ['p', 'q'].map((label) =>
      spawnWorker(new URL('./adder.worker.ts', import.meta.url), [
        keySpace.prefix,
        name,
        label,
        String(BATCHES_PER_PHASE),
        String(PHASES),
      ]),
    )
    await Promise.all(workers.map((w) => w.waitFor((m) => (m as { ready?: boolean }).ready === true)))
    const finished = workers.map((w) =>
      w
        .waitFor((m) => (m as Partial<Done>).done === true, 120_000)
        .then((m) => {
          done++
          return m as Done
        }),
    )
    while (done < 2) await bloom.rebuild(source(true))
    const results = await Promise.all(finished)
    await Promise.all(workers.map((w) => w.exited))

    // adds really raced the rebuilds: in each of the first PHASES rounds, items landed after the snapshot
    expect(afterSnapshot.length).toBeGreaterThanOrEqual(PHASES)
    for (const n of afterSnapshot.slice(0, PHASES)) expect(n).toBeGreaterThanOrEqual(6)
    const items: string[] = []
    for (const r of results) {
      expect(r.failed).toBe(0)
      expect(r.added).toBe(PHASES * BATCHES_PER_PHASE * 3)
      for (let i = 0; i < r.added; i++) items.push(`${r.label}:${i}`)
    }
    const answers = await bloom.mightContain(items)
    const lost = items.filter((_, i) => !answers[i])
    expect(lost).toEqual([])
    // and the filter is really answering (not failing open)
    const absent = await bloom.mightContain(Array.from({ length: 1000 }, (_, i) => `absent:${i}`))
    expect(absent.filter(Boolean).length).toBeLessThan(50)
    expect(bloom.stats.failOpenRedisError + bloom.stats.failOpenNotReady).toBe(0)
  }, 150_000)
})
