import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { WorkerGroup } from './workers/harness.js'

const redis = testRedisClient()
let group: WorkerGroup | undefined

afterEach(async () => {
  await group?.stop()
  if (group) await deleteByPrefix(redis, group.prefix)
  group = undefined
})
afterAll(() => redis.disconnect())

describe('stampede across processes', () => {
  it('4 processes × 250 concurrent callers of one cold key: exactly one loader call, 1000 values', async () => {
    group = new WorkerGroup(redis, uniquePrefix('stampede'), 4, { l1: false })
    await group.ready()
    const replies = await group.send({ op: 'swarm', key: 'hot', callers: 250, loaderMs: 100 })
    expect(Number(await redis.get(`${group.prefix}:loads`))).toBe(1)
    expect(replies.reduce((sum, r) => sum + (r.ok as number), 0)).toBe(1000)
    const values = new Set(replies.flatMap((r) => r.values as string[]))
    expect([...values]).toEqual(['hot#1'])
  }, 90_000)

  it('lock holder SIGKILLed mid-load: the lock expires, one other process loads, nobody waits past lock TTL + wait', async () => {
    const lockTtlMs = 1000
    const lockWaitMs = 3000
    group = new WorkerGroup(redis, uniquePrefix('stampede-kill'), 4, { l1: false, lockTtlMs, lockWaitMs })
    await group.ready()
    let chosen = false
    const killed = new Promise<number>((resolve) => {
      for (const [i, w] of group!.workers.entries()) {
        void w
          .waitFor((m) => (m as { event?: string }).event === 'loading')
          .then(() => {
            if (chosen) return
            chosen = true
            w.child.kill('SIGKILL')
            resolve(i)
          })
          .catch(() => {})
      }
    })
    const id = 'kill'
    await redis.publish(
      `${group.prefix}:cmd`,
      JSON.stringify({ op: 'swarm', key: 'hot', callers: 250, loaderMs: 300, id }),
    )
    const victim = await killed
    const survivors = group.workers.filter((_, i) => i !== victim)
    const replies = (await Promise.all(
      survivors.map((w) => w.waitFor((m) => (m as { id?: string }).id === id, 20_000)),
    )) as Record<string, number | string[]>[]
    expect(Number(await redis.get(`${group.prefix}:loads`))).toBe(2)
    expect(replies.reduce((sum, r) => sum + (r.ok as number), 0)).toBe(750)
    expect(new Set(replies.flatMap((r) => r.values as string[]))).toEqual(new Set(['hot#2']))
    const margin = 1000
    for (const r of replies) expect(r.maxMs as number).toBeLessThan(lockTtlMs + lockWaitMs + margin)
    group.workers.splice(victim, 1)
  }, 90_000)
})
