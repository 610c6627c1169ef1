import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import type { BatchHandler, StreamEntry } from '../../src/stream/index.js'
import { poll, streamFixture } from './stream_fixture.js'

const { redis, streamPair, add, consumer } = streamFixture()

describe('StreamGroupConsumer', () => {
  it('applies new entries, acks them, and trims behind itself', async () => {
    const source = streamPair()
    const seen: string[] = []
    const c = consumer({
      sources: [source],
      batchSize: 7,
      handler: async (entries) => {
        expect(entries.length).toBeLessThanOrEqual(7)
        seen.push(...entries.map((e) => e.fields.i!))
        return undefined
      },
    })
    c.start()
    await add(source.stream, 30)
    await until(() => seen.length === 30, poll)
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => String(i)))
    expect(c.stats.claimed).toBe(0)
    await until(async () => (await c.maintain()).pending === 0, poll)
    const lag = await c.maintain()
    expect(lag.length).toBeLessThanOrEqual(1)
  })

  it('recreates its group after Redis lost the stream (FLUSHALL, restart) and reads the new entries', async () => {
    const source = streamPair()
    const seen: string[] = []
    const c = consumer({
      sources: [source],
      handler: async (entries) => {
        seen.push(...entries.map((e) => e.fields.i!))
        return undefined
      },
    })
    c.start()
    await add(source.stream, 2)
    await until(() => seen.length === 2, poll)
    await redis.del(source.stream) // the stream and its group are gone
    await sleep(150)
    await add(source.stream, 3, (i) => ['i', `new${i}`])
    await until(() => seen.length === 5, poll)
    expect(seen.slice(2)).toEqual(['new0', 'new1', 'new2'])
  })

  it('claims entries left pending by a dead consumer, dropping ids deleted meanwhile', async () => {
    const source = streamPair()
    const ids = await add(source.stream, 5)
    await redis.xgroup('CREATE', source.stream, 'g', '0')
    await redis.xreadgroup('GROUP', 'g', 'dead-one', 'COUNT', 5, 'STREAMS', source.stream, '>')
    await redis.xdel(source.stream, ids[1]!)
    const seen: string[] = []
    const c = consumer({
      sources: [source],
      handler: async (entries) => {
        seen.push(...entries.map((e) => e.id))
        return undefined
      },
    })
    c.start()
    await until(() => seen.length === 4, poll)
    expect(seen).toEqual([ids[0], ids[2], ids[3], ids[4]])
    expect(c.stats.claimed).toBe(4)
    expect(c.stats.deletedWhilePending).toBe(1)
    await until(async () => (await c.maintain()).pending === 0, poll)
  })

  it('retries a transient failure with backoff, unacknowledged, then applies', async () => {
    const source = streamPair()
    let calls = 0
    const applied: StreamEntry[] = []
    const c = consumer({
      sources: [source],
      handler: async (entries) => {
        calls++
        if (calls <= 3) throw new Error('database down')
        applied.push(...entries)
        return undefined
      },
    })
    c.start()
    await add(source.stream, 3)
    await until(() => applied.length === 3, poll)
    expect(c.stats.transientFailures).toBe(3)
    expect(((await redis.xpending(source.stream, 'g')) as unknown[])[0]).toBe(0)
  })

  it('isolates a poison entry by bisection and dead-letters it after maxDeliveries', async () => {
    const source = streamPair()
    const applied = new Set<string>()
    const handler: BatchHandler = async (entries) => {
      if (entries.some((e) => e.fields.i === 'poison'))
        throw Object.assign(new Error('bad data'), { poison: true })
      for (const e of entries) applied.add(e.fields.i!)
      return undefined
    }
    const registry = new Registry()
    const c = consumer({
      sources: [source],
      handler,
      maxDeliveries: 3,
      isPoison: (e) => (e as { poison?: boolean }).poison === true,
      registry,
    })
    const ids = await add(source.stream, 9, (i) => ['i', i === 4 ? 'poison' : String(i)])
    c.start()
    await until(() => applied.size === 8, poll)
    await until(async () => (await redis.xlen(source.deadLetter)) === 1, poll)
    const [letter] = await redis.xrange(source.deadLetter, '-', '+')
    const fields = letter![1]
    expect(fields.slice(0, 4)).toEqual(['i', 'poison', '_id', ids[4]])
    expect(fields[fields.indexOf('_error') + 1]).toContain('bad data')
    expect(fields[fields.indexOf('_deliveries') + 1]).toBe('3')
    expect(c.stats.deadLettered).toBe(1)
    await until(async () => (await c.maintain()).pending === 0, poll)
    const text = await registry.metrics()
    expect(text).toMatch(/floodgate_stream_dead_lettered_total\{group="g"\} 1/)
    expect(text).toMatch(/floodgate_stream_applied_total\{group="g"\} 8/)
    expect(text).toMatch(/floodgate_stream_pending\{group="g"\} 0/)
  })

  it('handler rejections through BatchOutcome.failed are retried, then dead-lettered', async () => {
    const source = streamPair()
    const c = consumer({
      sources: [source],
      maxDeliveries: 2,
      handler: async (entries) => ({
        failed: entries.map((entry) => ({ entry, error: new Error('never') })),
      }),
    })
    await add(source.stream, 2)
    c.start()
    await until(async () => (await redis.xlen(source.deadLetter)) === 2, poll)
    expect(c.stats.rejected).toBe(2)
    expect(c.stats.deadLettered).toBe(2)
  })
})
