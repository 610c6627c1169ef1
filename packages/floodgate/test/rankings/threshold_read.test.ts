import { until } from '@floodgate/test-support'
import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { createRankings, toMember } from '../../src/index.js'
import { InteractionKeys } from '../../src/interactions/keys.js'
import { mergeTops, parseWithScores } from '../../src/rankings/merge.js'
import { readTopsByThreshold } from '../../src/rankings/threshold_read.js'
import { prng } from '../support/prng.js'
import { deleteByPrefix, testRedis, uniquePrefix } from '../support/redis.js'

const redis = testRedis()
const prefix = uniquePrefix('rankth')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

beforeEach(async () => {
  await deleteByPrefix(redis, prefix)
})

type Shape = 'uniform' | 'one hot partition' | 'ties' | 'with zero and negative' | 'with infinities'

async function seedAllTime(keys: InteractionKeys, shape: Shape, items: number, random: () => number) {
  const pipe = redis.pipeline()
  for (let i = 1; i <= items; i++) {
    const id = String(i)
    let score = Math.floor(random() * 1000) + 1
    if (shape === 'ties') score = Math.floor(random() * 3) + 1
    if (shape === 'with zero and negative') score = Math.floor(random() * 7) - 3
    if (shape === 'one hot partition' && keys.partitionOf(id) === 0) score += 100_000
    // foreign writes: left out of the answer, and a partition whose last read member is one is read on
    const foreign =
      shape === 'with infinities' && random() < 0.2 ? (random() < 0.5 ? 'inf' : '-inf') : undefined
    pipe.zadd(keys.rankAll(keys.partitionOf(id), 'likes'), foreign ?? score, toMember(id))
  }
  await pipe.exec()
}

/** The model (the read before): every partition's top `limit` read, merged. */
async function readWhole(keys: InteractionKeys, limit: number) {
  const parts = await Promise.all(
    keys
      .allPartitions()
      .map(async (p) =>
        parseWithScores(await redis.zrevrange(keys.rankAll(p, 'likes'), 0, limit - 1, 'WITHSCORES')),
      ),
  )
  return mergeTops(parts, limit)
}

describe('readTopsByThreshold (exact top over partitions in at most two round trips)', () => {
  it("equals the merge of every partition's top limit, over shapes, partition counts and limits", async () => {
    let cases = 0
    for (const partitions of [1, 3, 40, 300]) {
      const keys = new InteractionKeys(prefix, partitions)
      for (const shape of [
        'uniform',
        'one hot partition',
        'ties',
        'with zero and negative',
        'with infinities',
      ] as const) {
        const random = prng(cases + 1)
        await deleteByPrefix(redis, prefix)
        await seedAllTime(keys, shape, Math.floor(random() * 900) + 1, random)
        for (const limit of [1, 7, 50, 200]) {
          const { parts } = await readTopsByThreshold(
            redis,
            (p) => keys.rankAll(p, 'likes'),
            partitions,
            limit,
            'test read',
            { keep: (score) => score > 0 },
          )
          const context = `${partitions} partitions, ${shape}, limit ${limit}`
          expect(mergeTops(parts, limit), context).toEqual(await readWhole(keys, limit))
          cases++
        }
      }
    }
    expect(cases).toBe(80)
  })

  it('reads a few entries per partition, not limit per partition (300 partitions, top 50)', async () => {
    const keys = new InteractionKeys(prefix, 300)
    await seedAllTime(keys, 'uniform', 30_000, prng(7))
    const monitor = await redis.monitor()
    let asked = 0
    let counting = true
    const second: string[][] = []
    let sentinelSeen = false
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'echo' && args[1] === `${prefix}:done`) sentinelSeen = true
      const command = counting ? args[0]?.toLowerCase() : undefined
      if (command === 'zrevrange' && args[1]?.startsWith(prefix))
        asked += Number(args[3]) - Number(args[2]) + 1
      if (command === 'zrevrangebyscore' && args[1]?.startsWith(prefix)) second.push(args.slice(1))
    })
    let top: unknown
    try {
      const rankings = createRankings({ redis, prefix, partitions: 300 })
      top = await rankings.top({ metric: 'likes', window: 'all', limit: 50 })
      // MONITOR lines arrive after the replies, in order: wait for a command sent after the read's
      await redis.echo(`${prefix}:done`)
      await until(() => sentinelSeen, { timeoutMs: 10_000, what: 'the MONITOR line of the sentinel' })
    } finally {
      counting = false
      monitor.disconnect()
    }
    expect(top).toEqual(await readWhole(keys, 50))
    // the second round's replies, replayed on the unchanged data
    for (const args of second)
      asked += ((await redis.call('ZREVRANGEBYSCORE', ...args)) as string[]).length / 2
    // every partition's top 50 would be 15,000 entries; the first round asks 2 of each (600)
    expect(asked).toBeGreaterThanOrEqual(600)
    expect(asked).toBeLessThan(1500)
  })
})
