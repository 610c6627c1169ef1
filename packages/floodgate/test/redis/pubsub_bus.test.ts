import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pubSubBusOf } from '../../src/redis/pubsub_bus.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

let server: PrivateRedis

beforeAll(async () => {
  server = await PrivateRedis.start()
})
afterAll(async () => {
  await server.destroy()
})

describe('the shared pub/sub connection across a reconnect', () => {
  it('re-subscribes by itself, and leaving right after the reconnect rejects nothing unhandled', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const redis = await privateRedisClient(server)
    let publisher: Redis | undefined
    try {
      const received: string[] = []
      let reconnected: () => void = () => undefined
      const back = new Promise<void>((resolve) => {
        reconnected = resolve
      })
      const stays = pubSubBusOf(redis).subscribe(
        ['stays'],
        (_, message) => received.push(`${message}`),
        () => reconnected(),
      )
      await stays.ready

      await server.kill()
      await server.start()
      await back
      publisher = await privateRedisClient(server)
      // the channel works again without anyone subscribing it anew
      for (let i = 0; i < 50 && received.length === 0; i++) {
        await publisher.publish('stays', 'after')
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      expect(received[0]).toBe('after')

      // Leaving between the reconnect's ready check (INFO) and its reply, the window CI hit: the
      // connection ends gracefully, the reply still comes, and ioredis's own re-SUBSCRIBE, written
      // after the end, was rejected with nobody to handle it ("Connection is closed.").
      const subscriber = (pubSubBusOf(redis) as unknown as { subscriber: Redis }).subscriber
      const gone = new Promise<void>((resolve) => {
        subscriber.once('connect', () => {
          const info = subscriber.info.bind(subscriber) as (...args: unknown[]) => unknown
          Object.assign(subscriber, {
            info: (...args: unknown[]) => {
              const sent = info(...args)
              stays.close()
              resolve()
              return sent
            },
          })
        })
      })
      await server.kill()
      await server.start()
      await gone
      await new Promise((resolve) => setTimeout(resolve, 300)) // a rejection surfaces within a few ticks
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
      publisher?.disconnect()
      redis.disconnect()
    }
  })
})
