// Issue 29: with `waitForReplicas`, writes to a node whose replicas are gone must not queue
// behind each other's WAIT (each one holding the connection for the whole timeout), and a lost
// script cache (a promoted replica has none) must be reloaded without queueing behind them.
// A private master with no replica at all: every WAIT 1 falls short.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { Interactions, ReplicationTimeoutError } from '../../src/interactions/index.js'
import { floodgateRedisOptions } from '../../src/redis/index.js'
import { PrivateRedis } from '../support/redis_server.js'

const WAIT_MS = 300
let master: PrivateRedis
let client: Redis

beforeAll(async () => {
  master = await PrivateRedis.start()
  // production options: 2 s command cap, no offline queue
  client = new Redis(master.url, floodgateRedisOptions())
  client.on('error', () => {})
  await client.ping().catch(async () => {
    await new Promise((resolve) => client.once('ready', resolve))
  })
  // Redis times WAIT out on its server cron (every 1000/hz ms: up to 100 ms late at the default
  // hz 10); at hz 100 the bound below measures what floodgate adds
  await client.config('SET', 'hz', '100')
}, 30_000)

afterAll(async () => {
  client?.disconnect()
  await master?.destroy()
})

it('no replica, script cache flushed: 24 concurrent writes each answer "not confirmed" within the WAIT timeout + 100 ms', async () => {
  const ix = new Interactions(client, { prefix: 'wl', waitForReplicas: { replicas: 1, timeoutMs: WAIT_MS } })
  try {
    // the write connection opens in the background: the first write that reaches WAIT
    for (let i = 0; i < 100; i++) {
      const e = await ix.setLiked('1', '1', true).catch((error: unknown) => error)
      if (e instanceof ReplicationTimeoutError) break
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    await client.script('FLUSH') // as on a promoted replica: no script cached
    const outcomes = await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        const started = Date.now()
        const error = await ix.setLiked('1', String(i + 2), true).then(
          () => undefined,
          (e: unknown) => e,
        )
        return { ms: Date.now() - started, error }
      }),
    )
    // before: each queued behind the previous WAIT (300 ms each), the reload behind them all,
    // the later ones timed out after 2 s with StoreUnavailableError
    const slow = outcomes.filter((o) => o.ms > WAIT_MS + 100).map((o) => o.ms)
    expect(slow).toEqual([])
    expect(outcomes.every((o) => o.error instanceof ReplicationTimeoutError)).toBe(true)
    // the node has the script again: the next write needs no reload and still answers in time
    const started = Date.now()
    await expect(ix.setLiked('1', '99', true)).rejects.toBeInstanceOf(ReplicationTimeoutError)
    expect(Date.now() - started).toBeLessThan(WAIT_MS + 100)
    expect(await client.sismember(ix.keys.likes('1'), '99')).toBe(1)
  } finally {
    ix.close()
  }
})

it('after a command timeout closed the node connection, the writes queued behind it go out on a new one', async () => {
  // a command timeout (300 ms) below the WAIT timeout: every batch's WAIT times out client-side,
  // which closes that node's connection (Redis drops what it has not run)
  const caller = new Redis(master.url, { ...floodgateRedisOptions({ commandTimeoutMs: 300 }) })
  caller.on('error', () => {})
  const ix = new Interactions(caller, { prefix: 'wl2', waitForReplicas: { replicas: 1, timeoutMs: 1000 } })
  try {
    const first = ix.setLiked('2', '1', true).catch((e: unknown) => e)
    await new Promise((resolve) => setTimeout(resolve, 100)) // the first batch is in WAIT
    const queued = await Promise.all(
      ['2', '3'].map((user) => ix.setLiked('2', user, true).catch((e: unknown) => e)),
    )
    expect(String((await first) as Error)).toMatch(/timed out/)
    // sent on a new connection (they ran), not failed unsent on the closed one
    for (const outcome of queued) expect(String(outcome as Error)).toMatch(/timed out/)
    expect(await client.smismember(ix.keys.likes('2'), '1', '2', '3')).toEqual([1, 1, 1])
  } finally {
    ix.close()
    caller.disconnect()
  }
})
