import { Cluster, Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { isCluster } from '../../src/redis/index.js'
import { foreignIoredis } from '../support/foreign_ioredis.js'

describe('isCluster', () => {
  it('tells a cluster client from a single-node one, whichever copy of ioredis made it', () => {
    const foreign = foreignIoredis()
    const seeds = [{ host: '127.0.0.1', port: 1 }]
    const clients = {
      cluster: new Cluster(seeds, { lazyConnect: true }),
      single: new Redis({ port: 1, lazyConnect: true }),
      foreignCluster: new foreign.Cluster(seeds, { lazyConnect: true }),
      foreignSingle: new foreign.Redis({ port: 1, lazyConnect: true }),
    }
    expect(clients.foreignCluster instanceof Cluster).toBe(false) // another copy indeed
    expect(Object.values(clients).map((client) => isCluster(client as Redis | Cluster))).toEqual([
      true,
      false,
      true,
      false,
    ])
    for (const client of Object.values(clients)) client.disconnect()
  })
})
