import { afterAll, describe, expect, it } from 'vitest'
import { KeySpace } from '../../src/index.js'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('lock-procs')
const space = new KeySpace(prefix)

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

interface Done {
  done: true
  pid: number
  tokens: number[]
  overlaps: number
}

describe('Mutex across processes', () => {
  it('3 processes × 50 acquisitions: one holder at a time, fencing tokens strictly increasing', async () => {
    const perWorker = 50
    const workers = [0, 1, 2].map(() =>
      spawnWorker(new URL('./contender.worker.ts', import.meta.url), [prefix, 'shared', String(perWorker)]),
    )
    await Promise.all(workers.map((w) => w.waitFor((m) => (m as { ready?: boolean }).ready === true)))
    await redis.set(space.tagged('check', 'shared', 'go'), '1')
    const results = (await Promise.all(
      workers.map((w) => w.waitFor((m) => (m as Partial<Done>).done === true, 60_000)),
    )) as Done[]
    await Promise.all(workers.map((w) => w.exited))

    for (const r of results) {
      expect(r.overlaps).toBe(0)
      expect(r.tokens).toHaveLength(perWorker)
      // each process sees its own tokens increase
      for (let i = 1; i < r.tokens.length; i++) expect(r.tokens[i]!).toBeGreaterThan(r.tokens[i - 1]!)
    }
    // the log is in critical-section order: tokens must strictly increase along it
    const log = await redis.lrange(space.tagged('check', 'shared', 'log'), 0, -1)
    const tokens = log.map((entry) => Number(entry.split(':')[0]))
    expect(tokens).toHaveLength(3 * perWorker)
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!)
    // the processes really contended: the holder changed hands many times
    const pids = log.map((entry) => entry.split(':')[1])
    const handovers = pids.filter((pid, i) => i > 0 && pid !== pids[i - 1]).length
    expect(handovers).toBeGreaterThan(10)
    expect(await redis.get(space.tagged('check', 'shared', 'inside'))).toBe('0')
  })
})
