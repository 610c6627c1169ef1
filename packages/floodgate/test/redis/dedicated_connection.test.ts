import { Cluster, Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { openDedicatedConnection } from '../../src/redis/index.js'
import { TEST_REDIS_URL } from '../support/redis.js'

describe('openDedicatedConnection', () => {
  it("keeps a single-node client's settings, overrides only what it is given, and answers", async () => {
    const client = new Redis(TEST_REDIS_URL, {
      keyPrefix: 'dc:',
      commandTimeout: 50,
      enableOfflineQueue: false,
    })
    const connection = openDedicatedConnection(client, {
      commandTimeoutMs: null,
      offlineQueue: true,
    }) as Redis
    try {
      expect(connection.options.keyPrefix).toBe('dc:')
      expect(connection.options.commandTimeout).toBeUndefined()
      expect(connection.options.enableOfflineQueue).toBe(true)
      expect(connection.listenerCount('error')).toBeGreaterThanOrEqual(1)
      expect(await connection.ping()).toBe('PONG') // queued until connected
    } finally {
      connection.disconnect()
      client.disconnect()
    }
  })

  // ioredis 5's Cluster.duplicate replaces redisOptions as a whole (ioredis 6 merges them)
  it("keeps a Cluster client's redisOptions (credentials, prefix) and swallows its errors", () => {
    // an unreachable seed: the connection fails in the background, which must not throw
    const client = new Cluster([{ host: '127.0.0.1', port: 1 }], {
      lazyConnect: true,
      redisOptions: { password: 'secret', keyPrefix: 'dc:', commandTimeout: 50 },
    })
    const connection = openDedicatedConnection(client, {
      commandTimeoutMs: 5000,
      maxRetriesPerRequest: 1,
    }) as Cluster
    try {
      expect(connection.options.redisOptions).toMatchObject({
        password: 'secret',
        keyPrefix: 'dc:',
        commandTimeout: 5000,
        maxRetriesPerRequest: 1,
      })
      expect(connection.listenerCount('error')).toBeGreaterThanOrEqual(1)
    } finally {
      connection.disconnect()
      client.disconnect()
    }
  })
})
