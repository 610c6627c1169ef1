import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { floodgateRedisOptions } from '../../src/redis/index.js'
import { StreamGroupConsumer } from '../../src/stream/index.js'
import { PrivateRedis } from '../support/redis_server.js'

let server: PrivateRedis
let client: Redis

beforeAll(async () => {
  server = await PrivateRedis.start()
  client = new Redis(server.url, floodgateRedisOptions({ commandTimeoutMs: 1000 }))
  client.on('error', () => undefined)
})
afterAll(async () => {
  client.disconnect()
  await server.destroy()
})

/** until()'s options here: 15 s covers the consumer's reconnection after a restart. */
const poll = { timeoutMs: 15_000, everyMs: 25 }

async function add(values: string[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      for (const v of values) await client.xadd('{s}:stream', '*', 'v', v)
      return
    } catch (error) {
      if (attempt > 100) throw error
      await sleep(50) // the client is still reconnecting
    }
  }
}

describe('StreamGroupConsumer across a Redis restart without persistence', () => {
  it('keeps running, re-creates its group on the empty server, and consumes new entries', async () => {
    const seen: string[] = []
    const errors: string[] = []
    const consumer = new StreamGroupConsumer(client, {
      sources: [{ stream: '{s}:stream', deadLetter: '{s}:dead' }],
      group: 'g',
      blockMs: 100,
      backoffBaseMs: 20,
      backoffMaxMs: 100,
      handler: async (entries) => {
        seen.push(...entries.map((e) => e.fields.v!))
        return undefined
      },
      onEvent: (e) => {
        if (e.type === 'error') errors.push(e.phase)
      },
    })
    consumer.start()
    await add(['a', 'b'])
    await until(() => seen.length === 2, poll)

    await server.kill()
    await sleep(300)
    await server.start()
    await add(['c', 'd'])
    await until(() => seen.length === 4, poll)
    expect(seen).toEqual(['a', 'b', 'c', 'd'])
    expect(errors.length).toBeGreaterThan(0)
    await consumer.stop()
  })
})
