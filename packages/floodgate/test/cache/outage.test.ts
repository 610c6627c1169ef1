import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BreakerState, createCache, createRedisClient } from '../../src/index.js'
import { PrivateRedis } from '../support/redis_server.js'

let server: PrivateRedis

beforeAll(async () => {
  server = await PrivateRedis.start()
})
afterAll(async () => {
  await server.destroy()
})

const redisTimeoutMs = 150
const loaderMs = 40
// Scheduling noise on a shared 2-core machine; the bound under test is timeout + loader.
const marginMs = 250

async function drive(
  cache: ReturnType<typeof createCache<string>>,
  stopAt: () => boolean,
  record: { calls: number; wrong: number; maxMs: number },
) {
  let i = 0
  while (!stopAt()) {
    const batch = Array.from({ length: 10 }, async () => {
      const key = `k${i++ % 40}`
      const started = performance.now()
      const value = await cache.getOrLoad(key, async (k) => {
        await sleep(loaderMs)
        return `v:${k}`
      })
      record.calls++
      record.maxMs = Math.max(record.maxMs, performance.now() - started)
      if (value !== `v:${key}`) record.wrong++
    })
    await Promise.all(batch)
  }
}

describe('Redis outage', () => {
  for (const kind of ['killed', 'black-holed (SIGSTOP)'] as const) {
    it(`Redis ${kind} mid-run: every caller gets the value within timeout + loader time; the breaker opens, then closes`, async () => {
      const redis = createRedisClient(server.url, { commandTimeoutMs: redisTimeoutMs })
      redis.on('error', () => {})
      const cache = createCache<string>({
        redis,
        name: 'outage',
        redisTimeoutMs,
        l1: false,
        breaker: { failureThreshold: 3, coolDownMs: 300 },
      })
      const states: BreakerState[] = []
      cache.events.on('breaker', ({ state }) => states.push(state))
      await cache.ready
      const record = { calls: 0, wrong: 0, maxMs: 0 }
      const phase = { done: false }
      const running = drive(cache, () => phase.done, record)
      await sleep(400)
      const child = (server as unknown as { child: ChildProcess }).child
      if (kind === 'killed') await server.kill()
      else child.kill('SIGSTOP')
      await sleep(1200)
      expect(cache.breaker.state).not.toBe('closed')
      if (kind === 'killed') await server.start()
      else child.kill('SIGCONT')
      const deadline = Date.now() + 8000
      while (cache.breaker.state !== 'closed' && Date.now() < deadline) await sleep(50)
      await sleep(200)
      phase.done = true
      await running
      cache.close()
      redis.disconnect()
      expect(record.wrong).toBe(0)
      expect(record.calls).toBeGreaterThan(50)
      expect(record.maxMs).toBeLessThan(redisTimeoutMs + loaderMs + marginMs)
      expect(states).toContain('open')
      expect(states.at(-1)).toBe('closed')
    }, 30_000)
  }
})
