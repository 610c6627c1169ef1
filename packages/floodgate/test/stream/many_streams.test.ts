// Issue 26: with hundreds of partition streams the consumer's read stays one command per round on a
// single node (one XREADGROUP naming every stream), not one per stream; entries of every stream
// still arrive. A private redis-server, so INFO commandstats counts this consumer alone.
import { until } from '@floodgate/test-support'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { type StreamEntry, StreamGroupConsumer } from '../../src/stream/index.js'
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

/** `STREAMS` sources, each stream in a slot of its own. */
function sourcesNamed(name: string) {
  return Array.from({ length: STREAMS }, (_, i) => ({
    stream: `${name}:{s${i}}:stream`,
    deadLetter: `${name}:{s${i}}:dead`,
  }))
}

/** A consumer of `sources` in group `g`, blocking reads of 100 ms. */
function consumerOf(
  sources: ReturnType<typeof sourcesNamed>,
  maintenanceIntervalMs: number,
  onEntries: (entries: readonly StreamEntry[]) => void,
) {
  return new StreamGroupConsumer(redis, {
    sources,
    group: 'g',
    blockMs: 100,
    maintenanceIntervalMs,
    handler: async (entries) => {
      onEntries(entries)
      return undefined
    },
  })
}

const xreadgroupCalls = async () => (await commandCalls(redis)).xreadgroup ?? 0

it('reads 300 streams with one XREADGROUP per round, and gets every stream’s entries', async () => {
  const sources = sourcesNamed('many')
  const seen = new Set<string>()
  const consumer = consumerOf(sources, 60_000, (entries) => {
    for (const e of entries) seen.add(e.stream)
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

it('keeps an idle consumer of 300 streams to one probe per stream per maintenance, and trims a stream that gets entries', async () => {
  const sources = sourcesNamed('idle')
  let applied = 0
  const consumer = consumerOf(sources, 100, (entries) => {
    applied += entries.length
  })
  const pipeline = redis.pipeline()
  for (const s of sources) pipeline.xadd(s.stream, '*', 'k', 'v')
  await pipeline.exec()
  consumer.start()
  try {
    await until(() => applied === STREAMS, poll)
    // one maintenance after the last ack finds every stream idle
    await new Promise((resolve) => setTimeout(resolve, 400))
    const before = await commandCalls(redis)
    const started = Date.now()
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const after = await commandCalls(redis)
    const delta = (name: string) => (after[name] ?? 0) - (before[name] ?? 0)
    const maintenances = (Date.now() - started) / 100 + 1
    // the trim script (EVALSHA, about seven commands inside) ran on every stream at every
    // maintenance: 300 per maintenance; idle, each stream gets one XREVRANGE … COUNT 1 instead
    expect(delta('evalsha')).toBeLessThan(STREAMS / 10)
    expect(delta('xinfo|groups')).toBeLessThan(STREAMS / 10)
    expect(delta('xrevrange')).toBeLessThanOrEqual(STREAMS * maintenances)
    // a stream that gets entries again is applied and trimmed as before
    const busy = sources[7]!.stream
    await redis.xadd(busy, '*', 'k', 'v')
    await redis.xadd(busy, '*', 'k', 'v')
    await until(() => applied === STREAMS + 2, poll)
    await until(async () => (await redis.xlen(busy)) === 1, poll)
    const lag = await consumer.maintain()
    expect(lag).toMatchObject({ pending: 0, undelivered: 0, length: STREAMS })
  } finally {
    await consumer.stop()
  }
})
