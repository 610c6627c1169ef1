import { spawn } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Registry } from 'prom-client'
import { afterEach, describe, expect, it } from 'vitest'
import {
  bindRateLimiterMetrics,
  createCache,
  createRateLimiter,
  createRedisClient,
  KeySpace,
  Mutex,
  type RedisClient,
  StoreUnavailableError,
} from '../../src/index.js'
import { freePort, PrivateRedis } from '../support/redis_server.js'

// Point 4 of issue 13: every primitive has a defined start-up story against a Redis that comes up
// late or never. A private redis-server on a free port is started late (or not at all).
const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function clientOn(port: number): RedisClient {
  const client = createRedisClient(`redis://127.0.0.1:${port}`)
  cleanups.push(() => client.disconnect())
  return client
}

/** A private Redis started on `port` after `delayMs`. */
async function startLate(port: number, delayMs: number): Promise<PrivateRedis> {
  await sleep(delayMs)
  const server = await PrivateRedis.start({ port })
  cleanups.push(() => server.destroy())
  return server
}

function limiterOn(client: RedisClient, extra: { startupWaitMs?: number } = {}) {
  return createRateLimiter({
    redis: client,
    prefix: 'startup',
    name: 'api',
    algorithm: 'fixedWindow',
    limit: 5,
    windowMs: 60_000,
    ...extra,
  })
}

describe('start-up', () => {
  it('createRedisClient attaches an error listener: no "Unhandled error event" in a child process', async () => {
    const port = await freePort() // nothing listens there
    const worker = fileURLToPath(new URL('./workers/unreachable_client.ts', import.meta.url))
    const child = spawn(
      process.execPath,
      ['--conditions=floodgate-source', '--import', 'tsx', worker, String(port)],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    )
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += chunk
    })
    child.stderr.on('data', (chunk) => {
      stderr += chunk
    })
    const code = await new Promise((resolve) => child.once('exit', resolve))
    expect(stderr).not.toContain('Unhandled error event')
    expect(stdout).toContain('done')
    expect(code).toBe(0)
  })

  it('a limiter used before the connection is up waits for it and decides in Redis', async () => {
    const port = await freePort()
    const limiter = limiterOn(clientOn(port))
    const first = limiter.limit('user-1') // sent while nothing listens yet
    await startLate(port, 300)
    const result = await first
    expect(result.source).toBe('redis')
    expect(result.allowed).toBe(true)
  })

  it('a limiter whose Redis never comes answers failOpen after startupWaitMs, never silently', async () => {
    const port = await freePort()
    const limiter = limiterOn(clientOn(port), { startupWaitMs: 200 })
    const registry = new Registry()
    bindRateLimiterMetrics(registry, limiter)
    const fallbacks: unknown[] = []
    limiter.events.on('fallback', (event) => fallbacks.push(event))
    const warnings: Record<string, unknown>[] = []
    const logged = createRateLimiter({
      redis: clientOn(port),
      prefix: 'startup',
      name: 'logged',
      algorithm: 'fixedWindow',
      limit: 5,
      windowMs: 60_000,
      startupWaitMs: 200,
      logger: { warn: (fields) => warnings.push(fields) },
    })
    const started = performance.now()
    const [result] = await Promise.all([limiter.limit('user-1'), logged.limit('user-1')])
    const waitedMs = performance.now() - started
    expect(result.source).toBe('failOpen')
    expect(waitedMs).toBeGreaterThanOrEqual(150)
    expect(waitedMs).toBeLessThan(1500)
    expect(fallbacks).toHaveLength(1)
    expect(fallbacks[0]).toMatchObject({ key: 'user-1', source: 'failOpen', allowed: true })
    expect((fallbacks[0] as { error: unknown }).error).toBeInstanceOf(StoreUnavailableError)
    expect(warnings).toEqual([
      expect.objectContaining({
        primitive: 'rateLimiter',
        policy: 'logged',
        key: 'user-1',
        source: 'failOpen',
      }),
    ])
    const text = await registry.metrics()
    expect(text).toContain(
      'floodgate_ratelimit_decisions_total{policy="api",source="failOpen",allowed="true"} 1',
    )
    expect(text).toContain(
      'floodgate_ratelimit_decisions_total{policy="api",source="redis",allowed="true"} 0',
    )
  })

  it('Mutex.acquire() before the connection is up waits for it within waitMs', async () => {
    const port = await freePort()
    const mutex = Mutex.named(clientOn(port), new KeySpace('startup'), 'job')
    const pending = mutex.acquire({ waitMs: 3000 })
    await startLate(port, 300)
    const lease = await pending
    expect(lease.fencingToken).toBe(1)
    await lease.release()
  })

  it("the cache's ready rejects with StoreUnavailableError while Redis is down, instead of waiting forever", async () => {
    const port = await freePort()
    const cache = createCache({ redis: clientOn(port), prefix: 'startup', name: 'videos' })
    cleanups.push(() => cache.close())
    const started = performance.now()
    const outcome = await Promise.race([
      cache.ready.then(
        () => 'ready',
        (error: unknown) => error,
      ),
      sleep(5000, 'still waiting'),
    ])
    expect(outcome).toBeInstanceOf(StoreUnavailableError)
    expect(performance.now() - started).toBeLessThan(3500) // STARTUP_DEFAULTS.waitMs is 2,000 ms
  })
})
