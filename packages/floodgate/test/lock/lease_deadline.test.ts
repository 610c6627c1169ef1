import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRedisClient, KeySpace, type LockLostError, Mutex, type RedisClient } from '../../src/index.js'
import { spawnWorker } from '../support/processes.js'
import { PrivateRedis } from '../support/redis_server.js'
import { StallingProxy } from '../support/stalling_proxy.js'

// A watchdog lease whose renewals cannot reach Redis (the server frozen by SIGSTOP) aborts its
// signal at the local deadline (TTL since the last successful renewal), whatever the client's
// command timeout: a renewal still in flight does not hold the deadline back.
const TTL_MS = 600
const PAUSE_MS = 1500
const SLACK_MS = 400 // timers on a busy 2-core box; the bug aborted at 2,203 ms or never

let server: PrivateRedis

beforeAll(async () => {
  server = await PrivateRedis.start()
})

afterAll(async () => {
  server.resume()
  await server.destroy()
})

async function connect(commandTimeoutMs: number | undefined): Promise<RedisClient> {
  const client = createRedisClient(server.url, { redis: { commandTimeout: commandTimeoutMs } })
  client.on('error', () => {})
  await new Promise((resolve) => client.once('ready', resolve))
  return client
}

describe('lease signal at the local deadline', () => {
  for (const commandTimeoutMs of [2000, undefined]) {
    it(`aborts by ttl ${TTL_MS} ms with Redis frozen, command timeout ${commandTimeoutMs ?? 'none'}`, async () => {
      const client = await connect(commandTimeoutMs)
      const name = `frozen-${commandTimeoutMs ?? 'none'}`
      const mutex = Mutex.named(client, new KeySpace('lease'), name, { ttlMs: TTL_MS, watchdog: true })
      const before = Date.now()
      const lease = await mutex.tryAcquire()
      if (!lease) throw new Error('not acquired')
      server.pause()
      const pausedAt = Date.now()
      try {
        const aborted = await Promise.race([
          new Promise<number>((resolve) =>
            lease.signal.addEventListener('abort', () => resolve(Date.now() - before)),
          ),
          new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), PAUSE_MS)),
        ])
        expect(aborted, 'signal aborted within the pause').toBeDefined()
        // at least one watchdog period passed (the lease did not give up early), at most ttl + slack
        expect(aborted).toBeGreaterThanOrEqual(TTL_MS / 3)
        expect(aborted).toBeLessThan(TTL_MS + SLACK_MS)
        expect((lease.signal.reason as LockLostError).reason).toBe('expired')
        expect(await lease.extend()).toBe(false) // no Redis call once aborted
        // stay frozen well past the server's TTL, so the renewal queued meanwhile finds the key gone
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS - (Date.now() - pausedAt)))
      } finally {
        server.resume()
      }
      // the server's TTL ran out meanwhile: another holder gets the lock at once
      const next = await new Mutex(client, mutex.keys, { ttlMs: 5000 }).tryAcquire()
      expect(next?.fencingToken).toBe(lease.fencingToken + 1)
      await next?.release()
      client.disconnect()
    })
  }

  it('a holder behind a stalled proxy learns of the loss by the time another process holds the lock', async () => {
    const proxy = await StallingProxy.start(server.port)
    const holder = spawnWorker(new URL('./stalled_holder.worker.ts', import.meta.url), [
      proxy.url,
      'stalled-proxy',
      String(TTL_MS),
      '2000',
    ])
    const client = await connect(2000)
    try {
      const { sentAt, fencingToken } = (await holder.waitFor(
        (m) => (m as { acquired?: boolean }).acquired === true,
      )) as { sentAt: number; fencingToken: number }
      proxy.stall()
      // this process, connected directly, takes the lock as soon as Redis lets it go
      const mutex = Mutex.named(client, new KeySpace('lease'), 'stalled-proxy')
      let next = await mutex.tryAcquire()
      while (!next) next = await mutex.tryAcquire()
      const nextAt = Date.now()
      const { abortedAt, reason } = (await holder.waitFor(
        (m) => typeof (m as { abortedAt?: number }).abortedAt === 'number',
        10_000,
      )) as { abortedAt: number; reason: string }
      expect(next.fencingToken).toBe(fencingToken + 1)
      expect(reason).toBe('expired')
      expect(nextAt - sentAt).toBeGreaterThanOrEqual(TTL_MS) // Redis kept the lock for the whole TTL
      expect(abortedAt - sentAt).toBeLessThan(TTL_MS + SLACK_MS)
      // only timer lag apart (the bug: 1.6 s after the other process took over)
      expect(abortedAt - nextAt).toBeLessThan(150)
      await next.release()
    } finally {
      holder.child.kill()
      await holder.exited
      client.disconnect()
      await proxy.close()
    }
  })
})
