import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, until } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LocalRedis, startLocalRedis } from '../src/redis/local_server.js'
import { createTestApp, type TestApp } from './support/app.js'

// A private redis-server: CLIENT LIST then shows this app's connections only.
const dir = mkdtempSync(join(tmpdir(), 'va-shared-tracking-'))
let server: LocalRedis
let redis: Redis
let admin: Redis
let t: TestApp

/** Names of the open tracking connections (ClientTracking names them `<name>:data` / `<name>:invalidate`). */
async function trackingConnections(): Promise<string[]> {
  const list = (await admin.client('LIST')) as string
  return [...list.matchAll(/\bname=(\S+:(?:data|invalidate))\b/g)].map((m) => m[1]!).sort()
}

beforeAll(async () => {
  const port = await freePort()
  server = await startLocalRedis(dir, port)
  redis = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 })
  redis.on('error', () => {})
  admin = new Redis(`redis://127.0.0.1:${port}`)
  t = await createTestApp('sharedtracking', {
    redis,
    // both users of client-side caching on (their defaults in main.ts)
    cache: { l1Tracking: true, rebuildBloomAtStart: false },
    counters: { tracking: true },
  })
})
afterAll(async () => {
  await t?.close()
  redis?.disconnect()
  admin?.disconnect()
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('client tracking shared by the video cache and the live counts', () => {
  it('opens one data and one invalidation connection per app, not one pair per user', async () => {
    const tracking = t.app.clientTracking()
    expect(await tracking.whenEstablished(5_000)).toBe(true)
    expect(t.app.counters.live.tracking).toBe(tracking)
    expect(await trackingConnections()).toEqual(['video-api-tracking:data', 'video-api-tracking:invalidate'])
  })

  it('closes the pair with the app', async () => {
    await t.app.close()
    await until(async () => (await trackingConnections()).length === 0, { timeoutMs: 5_000, everyMs: 20 })
    expect(await trackingConnections()).toEqual([])
  })
})
