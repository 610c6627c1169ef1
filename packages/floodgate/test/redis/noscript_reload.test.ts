import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRateLimiter, createRedisClient, LuaScript, type RedisClient } from '../../src/index.js'
import { spawnWorker } from '../support/processes.js'
import { PrivateRedis } from '../support/redis_server.js'

// After SCRIPT FLUSH, concurrent callers share one reload per process and script (the other
// calls wait for it), counted in the private server's INFO commandstats.
const CALLERS = 32

let server: PrivateRedis
let client: RedisClient

beforeAll(async () => {
  server = await PrivateRedis.start()
  client = createRedisClient(server.url, { commandTimeoutMs: 5000 })
  await new Promise((resolve) => client.once('ready', resolve))
})

afterAll(async () => {
  client.disconnect()
  await server.destroy()
})

/** Calls per command since the last CONFIG RESETSTAT, from INFO commandstats. */
async function commandCalls(): Promise<Record<string, number>> {
  const info = (await client.info('commandstats')) as string
  const calls: Record<string, number> = {}
  for (const match of info.matchAll(/^cmdstat_([\w|]+):calls=(\d+)/gm)) calls[match[1]!] = Number(match[2])
  return calls
}

async function flushScriptsAndStats(): Promise<void> {
  await client.script('FLUSH')
  await client.config('RESETSTAT')
}

describe('LuaScript reload after NOSCRIPT', () => {
  it(`${CALLERS} concurrent limiter calls after SCRIPT FLUSH: one EVAL, the rest EVALSHA`, async () => {
    const limiter = createRateLimiter({
      redis: client,
      prefix: 'noscript',
      algorithm: 'slidingWindow',
      limit: 1000,
      windowMs: 60_000,
      timeoutMs: 5000,
      fallback: 'failClosed',
      batchMaxKeys: 1, // a script call per decision: concurrent calls, not one batch
    })
    await limiter.limit('warm') // the script is cached, then lost
    await flushScriptsAndStats()
    const results = await Promise.all(Array.from({ length: CALLERS }, (_, i) => limiter.limit(`k${i % 4}`)))
    expect(results.every((r) => r.source === 'redis' && r.allowed)).toBe(true)
    const calls = await commandCalls()
    expect(calls.eval ?? 0).toBe(1)
    expect(calls['script|load'] ?? 0).toBe(0)
    expect(calls.evalsha).toBe(2 * CALLERS - 1) // every NOSCRIPT'd call but the reloader's, sent again
    // later calls go straight to EVALSHA
    await client.config('RESETSTAT')
    await limiter.limit('after')
    expect(await commandCalls()).toMatchObject({ evalsha: 1 })
  })

  it(`${CALLERS} concurrent runFollowedBy (script + WAIT in one pipeline) after SCRIPT FLUSH: one EVAL`, async () => {
    const extend = new LuaScript(new URL('../../src/lock/lua/extend-1.lua', import.meta.url))
    const run = (i: number) =>
      extend.runFollowedBy(client, [`noscript:follow:{${i}}`], ['token', 1000], {
        name: 'wait',
        args: [0, 0],
      })
    await run(0)
    await flushScriptsAndStats()
    const replies = await Promise.all(Array.from({ length: CALLERS }, (_, i) => run(i)))
    expect(replies).toEqual(Array.from({ length: CALLERS }, () => [0, 0])) // no key: not extended; 0 replicas
    const calls = await commandCalls()
    expect(calls.eval ?? 0).toBe(1)
    expect(calls.wait).toBe(2 * CALLERS)
  })

  it(`3 processes × ${CALLERS} callers after SCRIPT FLUSH: one EVAL per process`, async () => {
    const workers = [0, 1, 2].map(() =>
      spawnWorker(new URL('./workers/noscript_caller.ts', import.meta.url), [
        server.url,
        'noscript-procs',
        String(CALLERS),
      ]),
    )
    await Promise.all(workers.map((w) => w.waitFor((m) => (m as { ready?: boolean }).ready === true)))
    await flushScriptsAndStats()
    await client.set('noscript-procs:go', '1')
    const done = (await Promise.all(
      workers.map((w) => w.waitFor((m) => (m as { done?: boolean }).done === true)),
    )) as { fromRedis: number }[]
    await Promise.all(workers.map((w) => w.exited))
    expect(done.map((d) => d.fromRedis)).toEqual([CALLERS, CALLERS, CALLERS])
    const calls = await commandCalls()
    // a process whose calls all reached Redis after another's EVAL needs none
    expect(calls.eval ?? 0).toBeGreaterThanOrEqual(1)
    expect(calls.eval ?? 0).toBeLessThanOrEqual(3)
  }, 60_000)
})
