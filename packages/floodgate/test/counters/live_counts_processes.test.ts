import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnWorker } from '../support/processes.js'
import { type CountsFixture, createCountsFixture } from './counts_fixture.js'
import { seedMembers } from './pg_schema.js'

// The flood of the issue: 4 service processes, 250 concurrent reads of one video each.
let f: CountsFixture

interface Outcome {
  answered: number
  likes: number[]
  stale: number
  redisReads: number
  fallbackCalls: number
}

async function burst(processes: number, reads: number): Promise<Outcome[]> {
  const file = new URL('./workers/live_reader.ts', import.meta.url)
  const workers = Array.from({ length: processes }, () =>
    spawnWorker(file, [f.server.url, f.prefix, f.schema.name, String(reads)]),
  )
  const outcomes = await Promise.all(
    workers.map((w) => w.waitFor((m) => (m as { done?: boolean }).done === true, 60_000)),
  )
  await Promise.all(workers.map((w) => w.exited))
  return outcomes as Outcome[]
}

beforeAll(async () => {
  f = await createCountsFixture('liveproc', 2)
  await seedMembers(f.schema.db, 'likes', 1, [7, 8])
  await f.interactions.setLiked('1', '7', true)
  await f.interactions.setLiked('1', '8', true)
})

afterAll(() => f.close())

describe('LiveCounts in 4 processes, 250 concurrent reads each', () => {
  it('Redis up: one Redis read per process', async () => {
    const before = await f.scardCalls()
    const outcomes = await burst(4, 250)
    for (const o of outcomes) {
      expect(o).toMatchObject({ answered: 250, likes: [2], stale: 0, redisReads: 1, fallbackCalls: 0 })
    }
    expect((await f.scardCalls()) - before).toBe(2 * 4)
  })

  it('Redis lost its data: one PostgreSQL query per process, not one per request', async () => {
    await f.redis.del(f.interactions.keys.epoch())
    const outcomes = await burst(4, 250)
    for (const o of outcomes) {
      expect(o).toMatchObject({ answered: 250, likes: [2], stale: 250, redisReads: 1, fallbackCalls: 1 })
    }
  })
})
