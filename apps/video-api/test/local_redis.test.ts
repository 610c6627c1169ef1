import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { portAnswers, RedisServerMissingError, startLocalRedis } from '../src/redis/local_server.js'

const dir = mkdtempSync(join(tmpdir(), 'va-localredis-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('local redis-server launcher', () => {
  it('starts redis-server with its own data folder and AOF, and stops it', async () => {
    const port = await freePort()
    const local = await startLocalRedis(dir, port)
    const client = new Redis(local.url)
    try {
      expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'yes'])
      expect(await client.config('GET', 'dir')).toEqual(['dir', join(dir, 'redis')])
      await client.set('k', 'v')
    } finally {
      client.disconnect()
      await local.stop()
    }
    expect(await portAnswers('127.0.0.1', port)).toBe(false)
    expect(existsSync(join(dir, 'redis'))).toBe(true)
  })

  it('explains how to install one when the binary is missing', async () => {
    const error = await startLocalRedis(dir, await freePort(), 'redis-server-not-installed-xyz').catch(
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(RedisServerMissingError)
    expect((error as Error).message).toMatch(/apt-get install redis-server.*REDIS_URL/s)
  })
})
