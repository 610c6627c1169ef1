import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  countsAgainstRedis,
  createRedisClient,
  DEADLINE_DEFAULTS,
  RedisTimeoutError,
  withinDeadline,
} from '../../src/index.js'
import { LuaScript, type RedisClient } from '../../src/redis/index.js'
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

  it('runs every call of one deadline length on one timer, each timing out on its own clock', async () => {
    // no ioredis commandTimeout: its per-command timers would hide ours
    const plain = createRedisClient(server.url, { redis: { commandTimeout: undefined } })
    plain.on('error', () => {})
    await new Promise((resolve) => plain.once('ready', resolve))
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length
    server.pause()
    try {
      const before = timers()
      const first = Array.from({ length: 100 }, () =>
        withinDeadline(plain.ping(), deadline, 'ping').catch((e: unknown) => e),
      )
      expect(timers() - before).toBeLessThanOrEqual(1)
      await sleep(30)
      const later = withinDeadline(plain.ping(), deadline, 'ping').catch((e: unknown) => e)
      const firstErrors = await Promise.all(first)
      const firstDoneMs = performance.now()
      const laterError = await later
      for (const error of [...firstErrors, laterError]) {
        expect(error).toBeInstanceOf(RedisTimeoutError)
        expect((error as RedisTimeoutError).loopStalled).toBe(false)
        expect((error as RedisTimeoutError).idleMs).toBeGreaterThanOrEqual(deadline.timeoutMs - 1)
      }
      // the later call kept its own start: it ran out about 30 ms after the first ones
      expect(performance.now() - firstDoneMs).toBeGreaterThanOrEqual(15)
    } finally {
      server.resume()
      plain.disconnect()
    }
  })

  it('reports a script call ended by the client’s cap while the loop was blocked as a stall', async () => {
    // the defaults: the client's commandTimeout and the deadline's maxWaitMs are both 2,000 ms
    const script = new LuaScript({ file: 'one-0.lua', source: 'return 1' })
    const call = withinDeadline(script.run(redis, [], []), DEADLINE_DEFAULTS, 'script')
    const settled = call.catch((e: unknown) => e)
    // Redis answers at once; the reply waits in the socket until both caps have passed
    blockLoop(DEADLINE_DEFAULTS.maxWaitMs + 300)
    const error = await settled
    expect(error).toBeInstanceOf(RedisTimeoutError)
    expect((error as RedisTimeoutError).loopStalled).toBe(true)
    expect(countsAgainstRedis(error)).toBe(false)
  })

  it('passes a Redis error through unchanged', async () => {
    await expect(withinDeadline(redis.call('NOSUCHCOMMAND'), deadline, 'bad')).rejects.toThrow(
      /unknown command/i,
    )
  })
})
