import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedisClient, RedisTimeoutError, withinDeadline } from '../../src/index.js'
import type { RedisClient } from '../../src/redis/index.js'
import { blockLoop } from '../support/busy_loop.js'
import { PrivateRedis } from '../support/redis_server.js'

let server: PrivateRedis
let redis: RedisClient

beforeAll(async () => {
  server = await PrivateRedis.start()
  redis = createRedisClient(server.url)
  redis.on('error', () => {})
  await new Promise((resolve) => redis.once('ready', resolve))
})
afterAll(async () => {
  redis.disconnect()
  await server.destroy()
})

const deadline = { timeoutMs: 50, maxWaitMs: 600 }

describe('withinDeadline', () => {
  it('keeps a reply that arrived while the event loop was blocked past the timeout', async () => {
    const call = withinDeadline(redis.ping(), deadline, 'ping')
    blockLoop(200)
    await expect(call).resolves.toBe('PONG')
  })

  it('times out after timeoutMs of idle loop when Redis is black-holed (not stalled)', async () => {
    server.pause()
    try {
      const started = performance.now()
      const error = await withinDeadline(redis.ping(), deadline, 'ping').catch((e: unknown) => e)
      const waitedMs = performance.now() - started
      expect(error).toBeInstanceOf(RedisTimeoutError)
      expect((error as RedisTimeoutError).loopStalled).toBe(false)
      expect(waitedMs).toBeGreaterThanOrEqual(45)
      expect(waitedMs).toBeLessThan(400)
    } finally {
      server.resume()
    }
  })

  it('gives up at maxWaitMs as a loop stall when the process never idles that long', async () => {
    server.pause()
    try {
      const started = performance.now()
      const call = withinDeadline(redis.ping(), deadline, 'ping').catch((e: unknown) => e)
      // busy in 30 ms slices with 1 ms gaps: never 50 ms of idle loop in the whole wait
      let busy = true
      const spin = async () => {
        while (busy) {
          blockLoop(30)
          await sleep(1)
        }
      }
      const spinning = spin()
      const error = await call
      busy = false
      await spinning
      expect(error).toBeInstanceOf(RedisTimeoutError)
      expect((error as RedisTimeoutError).loopStalled).toBe(true)
      expect(performance.now() - started).toBeGreaterThanOrEqual(deadline.maxWaitMs - 5)
    } finally {
      server.resume()
    }
  })

  it('passes a Redis error through unchanged', async () => {
    await expect(withinDeadline(redis.call('NOSUCHCOMMAND'), deadline, 'bad')).rejects.toThrow(
      /unknown command/i,
    )
  })
})
