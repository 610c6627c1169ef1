import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ClientTracking, floodgateRedisOptions } from '../../src/index.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// A private redis-server: these tests kill connections and FLUSHALL.
let server: PrivateRedis
let admin: Redis
const open: { tracking: ClientTracking; client: Redis }[] = []

async function tracked(): Promise<ClientTracking> {
  const client = new Redis(server.url, floodgateRedisOptions({ commandTimeoutMs: 2000 }))
  client.on('error', () => undefined)
  const tracking = new ClientTracking(client)
  open.push({ tracking, client })
  expect(await tracking.whenEstablished(5_000)).toBe(true)
  return tracking
}

/** Every invalidation `tracking` tells of from now on. */
function heardBy(tracking: ClientTracking): (readonly string[] | null)[] {
  const heard: (readonly string[] | null)[] = []
  tracking.onInvalidate((keys) => heard.push(keys))
  return heard
}

/** Ids of the connections named `name` (CLIENT LIST). */
async function idsNamed(name: string): Promise<string[]> {
  const list = (await admin.client('LIST')) as string
  return [...list.matchAll(/^id=(\d+) .* name=(\S+) /gm)].filter((m) => m[2] === name).map((m) => m[1]!)
}

beforeAll(async () => {
  server = await PrivateRedis.start()
  admin = await privateRedisClient(server)
})

afterEach(() => {
  for (const { tracking, client } of open.splice(0)) {
    tracking.close()
    client.disconnect()
  }
})

afterAll(async () => {
  admin.disconnect()
  await server.destroy()
})

describe('ClientTracking', () => {
  it('tells of a key read on its connection when another client changes it, once per read', async () => {
    const tracking = await tracked()
    const heard = heardBy(tracking)
    await tracking.connection!.get('k:a')
    await admin.set('k:a', '1')
    await until(() => heard.length === 1)
    expect(heard).toEqual([['k:a']])
    await admin.set('k:a', '2') // not read again: Redis forgot it, no message
    await admin.set('k:other', '1') // never read: no message (default mode, not BCAST)
    await tracking.connection!.get('k:a')
    await admin.set('k:a', '3')
    await until(() => heard.length === 2)
    expect(heard).toEqual([['k:a'], ['k:a']])
    expect(tracking.stats).toMatchObject({ invalidations: 2, invalidatedKeys: 2, flushes: 0 })
  })

  it('a null message (FLUSHALL) flushes: the generation moves on, listeners hear null', async () => {
    const tracking = await tracked()
    const heard = heardBy(tracking)
    const generation = tracking.generation
    const read = tracking.begin(['k:b'])!
    await read.connection.get('k:b')
    await admin.flushall()
    await until(() => heard.length === 1)
    expect(heard).toEqual([null])
    expect(tracking.generation).not.toBe(generation)
    expect(read.unchanged('k:b')).toBe(false)
    expect(tracking.established).toBe(true)
    expect(tracking.stats.flushes).toBe(1)
  })

  for (const which of ['invalidate', 'data'] as const) {
    it(`${which} connection killed: nothing read before is valid; tracking comes back and works`, async () => {
      const tracking = await tracked()
      const heard = heardBy(tracking)
      const generation = tracking.generation
      const read = tracking.begin(['k:c'])!
      await read.connection.get('k:c')
      const [id] = await idsNamed(`floodgate-tracking:${which}`)
      await admin.client('KILL', 'ID', id!)
      await until(() => !tracking.established)
      expect(read.unchanged('k:c')).toBe(false)
      expect(tracking.begin(['k:c'])).toBeUndefined()
      expect(heard).toEqual([null])
      expect(await tracking.whenEstablished(5_000)).toBe(true)
      expect(tracking.generation).toBeGreaterThan(generation + 1)
      expect(tracking.stats).toMatchObject({ losses: 1, establishments: 2 })
      await tracking.connection!.get('k:c')
      await admin.set('k:c', '1')
      await until(() => heard.length === 2)
      expect(heard[1]).toEqual(['k:c'])
    })
  }

  it('a heartbeat with no pong drops everything and reconnects', async () => {
    const client = new Redis(server.url, floodgateRedisOptions({ commandTimeoutMs: 2000 }))
    client.on('error', () => undefined)
    // short heartbeat so the test runs in well under a second (default 1,000 ms + 1,000 ms)
    const tracking = new ClientTracking(client, { heartbeatMs: 50, heartbeatTimeoutMs: 100 })
    open.push({ tracking, client })
    expect(await tracking.whenEstablished(5_000)).toBe(true)
    const [id] = await idsNamed('floodgate-tracking:invalidate')
    // CLIENT PAUSE holds every client's commands, the PINGs included, but keeps connections open
    await admin.call('CLIENT', 'PAUSE', '400', 'ALL')
    await until(() => tracking.stats.heartbeatFailures > 0, { timeoutMs: 3_000 })
    expect(tracking.established).toBe(false)
    expect(await tracking.whenEstablished(5_000)).toBe(true)
    expect(await idsNamed('floodgate-tracking:invalidate')).not.toContain(id)
  })

  it('a silent invalidation connection suspends validity; the next pong restores it, no flush', async () => {
    const client = new Redis(server.url, floodgateRedisOptions({ commandTimeoutMs: 2000 }))
    client.on('error', () => undefined)
    // silence bound 300 ms, heartbeat 50 ms, and a PING timeout longer than the pause (default
    // 1,000 / 250 / 1,000 ms): the pause below is a silence, not a loss
    const tracking = new ClientTracking(client, {
      heartbeatMs: 50,
      maxSilenceMs: 300,
      heartbeatTimeoutMs: 5_000,
    })
    open.push({ tracking, client })
    expect(await tracking.whenEstablished(5_000)).toBe(true)
    const generation = tracking.generation
    const pausedAt = performance.now()
    await admin.call('CLIENT', 'PAUSE', '900', 'ALL')
    await until(() => !tracking.established, { timeoutMs: 2_000 })
    const silentAfterMs = performance.now() - pausedAt
    expect(silentAfterMs).toBeLessThan(900)
    expect(tracking.state).toBe('established')
    expect(tracking.recovering).toBe(true)
    expect(tracking.begin(['k'])).toBeUndefined()
    await until(() => tracking.established, { timeoutMs: 3_000 })
    expect(tracking.generation).toBe(generation)
    expect(tracking.stats.losses).toBe(0)
  })

  it('Redis restarted: lost, then established again on the new server', async () => {
    const tracking = await tracked()
    await server.kill()
    await until(() => !tracking.established)
    await server.start()
    expect(await tracking.whenEstablished(10_000)).toBe(true)
    admin.disconnect()
    admin = await privateRedisClient(server)
  })

  it('Redis refuses CLIENT TRACKING (an ACL without it): unsupported, connections closed', async () => {
    await admin.call('ACL', 'SETUSER', 'notrack', 'on', 'nopass', '~*', '&*', '+@all', '-client|tracking')
    const client = new Redis(server.url, {
      ...floodgateRedisOptions({ commandTimeoutMs: 2000 }),
      username: 'notrack',
      password: 'x',
    })
    client.on('error', () => undefined)
    const tracking = new ClientTracking(client)
    open.push({ tracking, client })
    await until(() => tracking.state === 'unsupported')
    expect(tracking.begin(['k'])).toBeUndefined()
    await sleep(100)
    expect(await idsNamed('floodgate-tracking:data')).toEqual([])
    expect(await idsNamed('floodgate-tracking:invalidate')).toEqual([])
  })

  it('close() stops it: not established, nothing begins', async () => {
    const tracking = await tracked()
    tracking.close()
    expect(tracking.state).toBe('closed')
    expect(tracking.begin(['k'])).toBeUndefined()
  })
})
