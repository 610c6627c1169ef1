import { until } from '@floodgate/test-support'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BloomFilter, BloomReplica, type BloomReplicaReloadReason, KeySpace } from '../../src/index.js'
import { commandCalls } from '../support/command_stats.js'
import { chunks, range } from '../support/items.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// A private server: the test kills its pub/sub clients and counts its commands (INFO commandstats).
let server: PrivateRedis
let redis: Redis
const keySpace = new KeySpace('fg')
let n = 0
const replicas: BloomReplica[] = []

beforeAll(async () => {
  server = await PrivateRedis.start()
  redis = await privateRedisClient(server)
})

afterAll(async () => {
  for (const replica of replicas) replica.close()
  redis.disconnect()
  await server.destroy()
})

const filter = (name: string) => new BloomFilter({ redis, keySpace, name, bits: 10_000_000, hashes: 7 })

async function builtWithReplica(): Promise<{ bloom: BloomFilter; replica: BloomReplica; name: string }> {
  const name = `p${n++}`
  const bloom = filter(name)
  await bloom.rebuild(chunks(range(0, 10_000, 'video'), 5_000))
  const replica = new BloomReplica({ filter: bloom })
  replicas.push(replica)
  await replica.start()
  expect(replica.state).toBe('live')
  return { bloom, replica, name }
}

const total = (calls: Record<string, number>) => Object.values(calls).reduce((a, b) => a + b, 0)

describe('BloomReplica on a private Redis', () => {
  it('5,000 concurrent queries of absent ids cost a handful of commands; the filter in Redis, thousands', async () => {
    const { bloom, replica } = await builtWithReplica()
    const absent = range(0, 5_000, 'missing')

    await redis.config('RESETSTAT')
    const remote = await Promise.all(absent.map((id) => bloom.mightContain([id])))
    const remoteCalls = await commandCalls(redis)
    await redis.config('RESETSTAT')
    const local = await Promise.all(absent.map((id) => replica.mightContain([id])))
    const localCalls = await commandCalls(redis)

    expect(local).toEqual(remote)
    expect(local.filter(([a]) => a === false).length).toBeGreaterThan(4_990)
    console.log('commands for 5,000 absent ids', { filter: remoteCalls, replica: localCalls })
    expect(total(remoteCalls)).toBeGreaterThanOrEqual(10_000) // HMGET + EVALSHA (+ GETBITs) per query
    expect(total(localCalls) - (localCalls.info ?? 0)).toBeLessThanOrEqual(5)
    expect(replica.stats.remote).toBe(0)
  })

  it('a dropped subscriber (CLIENT KILL) reloads, and a skipped add number reloads: no add is missed', async () => {
    const { replica, name } = await builtWithReplica()
    const reasons: BloomReplicaReloadReason[] = []
    replica.on('reload', ({ reason }) => reasons.push(reason))
    const other = filter(name) // "another instance"

    expect(await redis.call('CLIENT', 'KILL', 'TYPE', 'pubsub')).toBeGreaterThanOrEqual(1)
    await other.add(range(0, 10, 'while-down'))
    await until(() => reasons.includes('reconnect') && replica.state === 'live', {
      timeoutMs: 10_000,
      everyMs: 10,
      what: 'reload after reconnect',
    })
    expect((await replica.mightContain(range(0, 10, 'while-down'))).every(Boolean)).toBe(true)

    // an add whose announcement never arrived: its number is skipped, the next one reveals the gap
    await redis.hincrby(other.keys(0).meta, 'addseq', 1)
    await other.add(['after-gap'])
    await until(() => reasons.includes('gap') && replica.state === 'live', {
      timeoutMs: 10_000,
      everyMs: 10,
      what: 'reload after a gap',
    })
    const { appliedSeq } = replica.position
    expect(Number(await redis.hget(other.keys(0).meta, 'addseq'))).toBe(appliedSeq)
    expect(await replica.mightContain(['after-gap'])).toEqual([true])
    expect(replica.stats.remote).toBe(0)
  })

  it('no bits (filter lost or not built): one query asks Redis, the ones meanwhile answer "maybe" at once', async () => {
    // a 1 s deadline (default 50 ms) so that "at once" cannot be mistaken for "after the wait"
    const replica = new BloomReplica({
      filter: filter(`p${n++}`),
      deadline: { timeoutMs: 1_000, maxWaitMs: 2_000 },
    })
    replicas.push(replica)
    await replica.start()
    expect(replica.state).toBe('not-loaded')
    expect(await replica.mightContain(['missing:probe'])).toEqual([true]) // learns "not ready"
    server.pause()
    try {
      let firstDone = false
      const first = replica.mightContain(['missing:0']).finally(() => {
        firstDone = true
      })
      const others = await Promise.all(range(1, 100, 'missing').map((id) => replica.mightContain([id])))
      // before: each query waited out its own round trip to the black-holed Redis
      expect(firstDone).toBe(false)
      expect(others.flat().every(Boolean)).toBe(true)
      expect(await first).toEqual([true])
    } finally {
      server.resume()
    }
    expect(replica.stats.remote).toBe(2)
    expect(replica.stats.unloaded).toBe(99)
  })

  it('no bits yet but the filter in Redis is ready (start-up): every query gets its "absent" answer', async () => {
    const { bloom } = await builtWithReplica()
    const replica = new BloomReplica({ filter: bloom }) // not started: no bits
    replicas.push(replica)
    const answers = await Promise.all(range(0, 50, 'missing').map((id) => replica.mightContain([id])))
    expect(answers.flat().filter((a) => a === false).length).toBeGreaterThan(45)
    expect(replica.stats.unloaded).toBe(0)
  })

  it('Redis black-holed: an id absent from the bits is "maybe" within the deadline, no throw', async () => {
    const { replica } = await builtWithReplica()
    server.pause()
    try {
      const started = performance.now()
      expect(await replica.mightContain(['missing:1', 'video:1'])).toEqual([true, true])
      expect(performance.now() - started).toBeLessThan(1_000)
      expect(replica.stats.syncFailures).toBe(1)
    } finally {
      server.resume()
    }
  })
})
