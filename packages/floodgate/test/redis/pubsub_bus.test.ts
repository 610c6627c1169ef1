import { until } from '@floodgate/test-support'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedisClient } from '../../src/index.js'
import { pubSubBusOf } from '../../src/redis/pubsub_bus.js'
import { freePort, PrivateRedis, privateRedisClient } from '../support/redis_server.js'

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
      const stays = pubSubBusOf(redis).subscribe(['stays'], {
        onMessage: (_, message) => received.push(`${message}`),
        onSubscribed: (afterLoss) => {
          if (afterLoss) reconnected()
        },
      })
      await stays.ready

      await server.kill()
      await server.start()
      await back
      expect(stays.live).toBe(true)
      publisher = await privateRedisClient(server)
      // the channel works again without anyone subscribing it anew, as soon as it says so
      await publisher.publish('stays', 'after')
      await until(() => received.length > 0, { what: 'the message after the reconnect' })
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

describe('the shared pub/sub connection when its first connect fails', () => {
  it('subscribes once Redis answers, and only then says it is ready and live', async () => {
    // nothing listens on the port yet: the first connect is refused, as a connect timeout on a
    // loaded process or a Redis at maxclients would fail it
    const late = await freePort()
    const redis = createRedisClient(`redis://127.0.0.1:${late}`)
    let lateServer: PrivateRedis | undefined
    let publisher: Redis | undefined
    try {
      const received: string[] = []
      const subscribed: boolean[] = []
      const sub = pubSubBusOf(redis).subscribe(['late'], {
        onMessage: (_, message) => received.push(`${message}`),
        onSubscribed: (afterLoss) => subscribed.push(afterLoss),
      })
      let ready = false
      void sub.ready.then(() => {
        ready = true
      })
      await new Promise((resolve) => setTimeout(resolve, 300)) // a few refused attempts
      expect({ ready, live: sub.live }).toEqual({ ready: false, live: false })

      lateServer = await PrivateRedis.start({ port: late })
      await sub.ready
      expect(sub.live).toBe(true)
      expect(subscribed).toEqual([true]) // messages published before could not have arrived
      publisher = await privateRedisClient(lateServer)
      expect(await publisher.publish('late', 'hello')).toBe(1)
      await until(() => received.length > 0, { what: 'the message' })
      expect(received).toEqual(['hello'])
      sub.close()
      expect(sub.live).toBe(false)
    } finally {
      publisher?.disconnect()
      redis.disconnect()
      await lateServer?.destroy()
    }
  }, 20_000)
})
