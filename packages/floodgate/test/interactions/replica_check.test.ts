// checkReplicas: counts online replicas per master from INFO replication, so a service using
// waitForReplicas can warn at start when WAIT cannot be satisfied. A private master and replica.
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkReplicas } from '../../src/interactions/index.js'
import { onlineReplicas } from '../../src/interactions/replica_check.js'
import { createRedisClient } from '../../src/redis/index.js'
import { PrivateRedis } from '../support/redis_server.js'

let master: PrivateRedis
let replica: PrivateRedis
let client: Redis

beforeAll(async () => {
  ;[master, replica] = await Promise.all([PrivateRedis.start(), PrivateRedis.start()])
  client = new Redis(master.url, { maxRetriesPerRequest: 1 })
}, 30_000)

afterAll(async () => {
  client?.disconnect()
  await Promise.all([master?.destroy(), replica?.destroy()])
})

describe('checkReplicas', () => {
  it('parses only online replicas', () => {
    const info = [
      '# Replication',
      'role:master',
      'connected_slaves:2',
      'slave0:ip=127.0.0.1,port=7001,state=online,offset=42,lag=0',
      'slave1:ip=127.0.0.1,port=7002,state=wait_bgsave,offset=0,lag=0',
    ].join('\r\n')
    expect(onlineReplicas(info)).toBe(1)
    expect(onlineReplicas('# Replication\r\nrole:master\r\nconnected_slaves:0\r\n')).toBe(0)
  })

  it('is not enough without a replica, enough once one is online; reads a client that is not ready yet', async () => {
    const fresh = createRedisClient(master.url) // floodgate client: no offline queue
    fresh.on('error', () => undefined)
    const before = await checkReplicas(fresh, 1)
    expect(before.enough).toBe(false)
    expect(before.masters).toEqual([{ node: `127.0.0.1:${master.port}`, replicas: 0 }])
    expect((await checkReplicas(fresh, 0)).enough).toBe(true)

    const replicaClient = new Redis(replica.url, { maxRetriesPerRequest: 1 })
    await replicaClient.replicaof('127.0.0.1', String(master.port))
    const deadline = Date.now() + 20_000
    while (!(await replicaClient.info('replication')).includes('master_link_status:up')) {
      if (Date.now() > deadline) throw new Error('replica did not sync')
      await sleep(50)
    }
    // the master lists the replica as online once it has acknowledged the sync
    let after = await checkReplicas(fresh, 1)
    while (after.enough !== true && Date.now() < deadline) {
      await sleep(50)
      after = await checkReplicas(fresh, 1)
    }
    expect(after.masters[0]!.replicas).toBe(1)
    expect(after.enough).toBe(true)
    expect((await checkReplicas(fresh, 2)).enough).toBe(false)
    replicaClient.disconnect()
    fresh.disconnect()
  }, 30_000)

  it('never throws: an unreachable node yields enough undefined and the error', async () => {
    const dead = await PrivateRedis.start()
    const port = dead.port
    await dead.destroy()
    const gone = createRedisClient(`redis://127.0.0.1:${port}`)
    gone.on('error', () => undefined)
    const report = await checkReplicas(gone, 1, { timeoutMs: 300 })
    expect(report.enough).toBeUndefined()
    expect(report.error).toBeTruthy()
    gone.disconnect()
  })
})
