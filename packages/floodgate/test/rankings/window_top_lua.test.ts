import { afterAll, beforeEach, describe, expect, it } from 'vitest'
import { toMember } from '../../src/index.js'
import { InteractionKeys } from '../../src/interactions/keys.js'
import { bucketWeights } from '../../src/rankings/decay.js'
import { windowTopScript } from '../../src/rankings/scripts.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// window-top-1.lua on its own: the weighted merge of one partition's minute buckets
const redis = testRedisClient()
const prefix = uniquePrefix('wtop')
const keys = new InteractionKeys(prefix, 4)
const P = 2
const MINUTE = 29_000_000

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

beforeEach(async () => {
  await deleteByPrefix(redis, prefix)
})

async function bucket(age: number, counts: Record<string, number>) {
  for (const [id, n] of Object.entries(counts))
    await redis.zincrby(keys.rankMinute(P, 'likes', MINUTE - age), n, toMember(id))
}

function run(windowMinutes: number, halfLifeMinutes: number, limit: number) {
  return windowTopScript.run(
    redis,
    [keys.rankMinutePrefix(P, 'likes')],
    [MINUTE, windowMinutes, halfLifeMinutes, limit],
  )
}

describe('window-top-1.lua', () => {
  it('weighs each bucket 2^(−age/half-life) as bucketWeights does, over more than one 512-bucket chunk', async () => {
    const ages = [0, 1, 511, 512, 513, 1023, 1024, 1439]
    for (const [i, age] of ages.entries()) await bucket(age, { [String(i + 1)]: 10, '100': 1 })
    await bucket(1440, { '200': 1_000_000 }) // one minute past the window
    const weights = bucketWeights(1440, 360)
    const reply = (await run(1440, 360, 50)) as string[]
    const got = new Map<string, number>()
    for (let i = 0; i < reply.length; i += 2) got.set(reply[i]!, Number(reply[i + 1]))
    for (const [i, age] of ages.entries())
      expect(got.get(toMember(String(i + 1)))).toBeCloseTo(10 * weights[age]!, 12)
    const common = ages.reduce((sum, age) => sum + weights[age]!, 0)
    expect(got.get(toMember('100'))).toBeCloseTo(common, 12)
    expect(got.has(toMember('200'))).toBe(false)
  })

  it('returns the top limit in ZREVRANGE order, higher member first on ties, and leaves no scratch key', async () => {
    await bucket(0, { '9': 3, '10': 3, '11': 5, '12': 1 })
    expect(await run(60, 15, 3)).toEqual([toMember('11'), '5', toMember('10'), '3', toMember('9'), '3'])
    expect(await redis.exists(`${keys.rankMinutePrefix(P, 'likes')}merge`)).toBe(0)
  })

  it('answers an empty list for a window without buckets', async () => {
    expect(await run(1, 1, 10)).toEqual([])
  })
})
