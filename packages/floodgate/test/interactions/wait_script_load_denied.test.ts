// With `waitForReplicas`, each node connection loads its scripts with SCRIPT LOAD before its
// first EVALSHA. A server may refuse SCRIPT LOAD while it runs EVAL and EVALSHA (an ACL user
// without `script|load`, a renamed SCRIPT command); the writes without the wait work there (their
// NOSCRIPT falls back to EVAL). The write must too, not resend its NOSCRIPT until the cap.
// A private master with one replica, an ACL user `+@all -script|load`.
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { Interactions } from '../../src/interactions/index.js'
import { floodgateRedisOptions } from '../../src/redis/index.js'
import { PrivateRedis } from '../support/redis_server.js'

let master: PrivateRedis
let replica: PrivateRedis
let admin: Redis

beforeAll(async () => {
  master = await PrivateRedis.start()
  replica = await PrivateRedis.start()
  admin = new Redis(master.url)
  const follower = new Redis(replica.url)
  try {
    await follower.replicaof('127.0.0.1', master.port)
  } finally {
    follower.disconnect()
  }
  for (let i = 0; ; i++) {
    if (/slave0:.*state=online/.test(await admin.info('replication'))) break
    if (i > 200) throw new Error('the replica did not come online')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  await admin.call('ACL', 'SETUSER', 'app', 'on', '>pw', '~*', '&*', '+@all', '-script|load')
}, 30_000)

afterAll(async () => {
  admin?.disconnect()
  await master?.destroy()
  await replica?.destroy()
})

it('SCRIPT LOAD refused: the write runs with EVAL, acknowledged at once', async () => {
  // production options: 2 s command cap, no offline queue
  const client = new Redis(master.url, { ...floodgateRedisOptions(), username: 'app', password: 'pw' })
  client.on('error', () => {})
  await new Promise((resolve) => client.once('ready', resolve))
  const ix = new Interactions(client, { prefix: 'sld', waitForReplicas: { replicas: 1, timeoutMs: 500 } })
  try {
    await admin.config('RESETSTAT')
    const started = Date.now()
    // before: StoreUnavailableError "NOSCRIPT …" after the 2 s cap, the batch resent ~8,000 times
    await expect(ix.setLiked('1', '1', true)).resolves.toMatchObject({ changed: true, count: 1 })
    expect(Date.now() - started).toBeLessThan(500)
    const stats = await admin.info('commandstats')
    const calls = (command: string) =>
      Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0)
    expect(calls('evalsha')).toBeLessThanOrEqual(1)
    expect(await admin.sismember(ix.keys.likes('1'), '1')).toBe(1)
  } finally {
    ix.close()
    client.disconnect()
  }
})
