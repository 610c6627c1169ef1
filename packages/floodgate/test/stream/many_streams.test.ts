// Issue 26: with hundreds of partition streams the consumer's read stays one command per round on a
// single node (one XREADGROUP naming every stream), not one per stream; entries of every stream
// still arrive. A private redis-server, so INFO commandstats counts this consumer alone.
import { until } from '@floodgate/test-support'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { StreamGroupConsumer } from '../../src/stream/index.js'
import { commandCalls } from '../support/command_stats.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'
import { poll } from './stream_fixture.js'

const STREAMS = 300
let server: PrivateRedis
let redis: Redis

beforeAll(async () => {
  server = await PrivateRedis.start()
  redis = await privateRedisClient(server)
})

afterAll(async () => {
  redis?.disconnect()
  await server?.destroy()
})

const xreadgroupCalls = async () => (await commandCalls(redis)).xreadgroup ?? 0

it('reads 300 streams with one XREADGROUP per round, and gets every stream’s entries', async () => {
  const sources = Array.from({ length: STREAMS }, (_, i) => ({
    stream: `many:{s${i}}:stream`,
    deadLetter: `many:{s${i}}:dead`,
  }))
  const seen = new Set<string>()
  const consumer = new StreamGroupConsumer(redis, {
    sources,
    group: 'g',
    blockMs: 100,
    maintenanceIntervalMs: 60_000,
    handler: async (entries) => {
      for (const e of entries) seen.add(e.stream)
      return undefined
    },
  })
  consumer.start()
  try {
    await until(async () => (await redis.exists(sources[STREAMS - 1]!.stream)) === 1, poll)
    const before = await xreadgroupCalls()
    const started = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const idleCalls = (await xreadgroupCalls()) - before
    const rounds = (Date.now() - started) / 100 + 1
    // idle, each round is one non-blocking read and one blocking read (blockMs 100), both over
    // all 300 streams; reading each stream on its own was 300 calls per round
    expect(idleCalls).toBeLessThanOrEqual(2 * rounds + 2)
    const pipeline = redis.pipeline()
    for (const s of sources) pipeline.xadd(s.stream, '*', 'k', 'v')
    await pipeline.exec()
    await until(() => seen.size === STREAMS, poll)
  } finally {
    await consumer.stop()
  }
})
