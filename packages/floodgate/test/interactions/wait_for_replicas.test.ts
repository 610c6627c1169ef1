// Durable acknowledgement (issue 7): with `waitForReplicas` every write step is followed by
// `WAIT n timeout` on the same connection. A private master and a private replica (never the
// shared Redis): a confirmed write is on the replica when the call returns; with the replica
// gone the call throws ReplicationTimeoutError (the master has the change; a retry is safe), and
// the caller's own connection is not held by the blocked WAIT.
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidArgumentError } from '../../src/errors/index.js'
import { Interactions, playViewer, ReplicationTimeoutError } from '../../src/interactions/index.js'
import { PrivateRedis } from '../support/redis_server.js'

let master: PrivateRedis
let replica: PrivateRedis
let masterClient: Redis
let replicaClient: Redis

beforeAll(async () => {
  ;[master, replica] = await Promise.all([PrivateRedis.start(), PrivateRedis.start()])
  masterClient = new Redis(master.url, { maxRetriesPerRequest: 1 })
  replicaClient = new Redis(replica.url, { maxRetriesPerRequest: 1 })
  replicaClient.on('error', () => {}) // the test kills the replica
  await replicaClient.replicaof('127.0.0.1', String(master.port))
  // event-driven enough: poll the replica's own view of its link (bounded, 20 s)
  const deadline = Date.now() + 20_000
  while (!(await replicaClient.info('replication')).includes('master_link_status:up')) {
    if (Date.now() > deadline) throw new Error('replica did not sync')
    await sleep(50)
  }
}, 30_000)

afterAll(async () => {
  masterClient?.disconnect()
  replicaClient?.disconnect()
  await Promise.all([master?.destroy(), replica?.destroy()])
})

describe('waitForReplicas', () => {
  it('refuses bad options with the field name; replicas 0 is off', () => {
    const make = (waitForReplicas: { replicas: number; timeoutMs: number }) =>
      new Interactions(masterClient, { prefix: 'w', waitForReplicas })
    expect(() => make({ replicas: -1, timeoutMs: 10 })).toThrow(InvalidArgumentError)
    expect(() => make({ replicas: 1.5, timeoutMs: 10 })).toThrow(/waitForReplicas.replicas/)
    expect(() => make({ replicas: 1, timeoutMs: 0 })).toThrow(/waitForReplicas.timeoutMs/)
    expect(make({ replicas: 0, timeoutMs: 10 }).options.waitForReplicas).toBeUndefined()
    expect(make({ replicas: 1, timeoutMs: 10 }).options.waitForReplicas).toEqual({
      replicas: 1,
      timeoutMs: 10,
    })
  })

  it('a confirmed like, favourite and play are on the replica when the call returns, also after SCRIPT FLUSH', async () => {
    const ix = new Interactions(masterClient, {
      prefix: 'w1',
      partitions: 2,
      waitForReplicas: { replicas: 1, timeoutMs: 5000 },
    })
    await masterClient.script('FLUSH') // the first call takes the NOSCRIPT path (EVAL + WAIT)
    for (let round = 0; round < 20; round++) {
      const user = String(round + 1)
      expect((await ix.setLiked('7', user, true)).changed).toBe(true)
      // no wait between the answer and the replica read: WAIT made it so
      expect(await replicaClient.sismember(ix.keys.likes('7'), user)).toBe(1)
      expect((await ix.setFavorited('7', user, true)).changed).toBe(true)
      expect(await replicaClient.sismember(ix.keys.favorites('7'), user)).toBe(1)
      const play = await ix.recordPlay('7', playViewer({ userId: user }))
      expect(play.counted).toBe(true)
      expect(await replicaClient.get(ix.keys.plays('7'))).toBe(String(play.count))
    }
    expect(await replicaClient.xlen(ix.keys.stream(ix.keys.partitionOf('7')))).toBe(60)
  })

  it("a batch's WAIT gets what is left of its oldest write's timeoutMs, not a whole one more", async () => {
    // issue 29: a write queued behind a slowly confirmed batch then waited a whole timeoutMs of
    // its own (up to twice the timeout in all); its budget runs from when its caller asked
    const ix = new Interactions(masterClient, {
      prefix: 'w5',
      waitForReplicas: { replicas: 1, timeoutMs: 500 },
    })
    const monitor = await masterClient.monitor()
    const waits: number[] = []
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'wait') waits.push(Number(args[2]))
    })
    try {
      await ix.setLiked('11', '9', true) // the node connection is up, the script loaded
      replica.pause() // the first batch's WAIT waits for the replica
      const first = ix.setLiked('11', '1', true)
      await sleep(50)
      const second = ix.setLiked('11', '2', true) // queued behind the first batch
      await sleep(350)
      replica.resume() // the first batch is confirmed ~400 ms in, the second sent then
      await expect(first).resolves.toMatchObject({ changed: true })
      await expect(second).resolves.toMatchObject({ changed: true })
      await sleep(50) // MONITOR's feed trails the replies
      expect(waits[0]).toBeGreaterThanOrEqual(490) // a batch sent at once: the whole timeout
      expect(waits.length).toBeGreaterThanOrEqual(3)
      // the second write had queued ~350 ms of its 500: its batch waits ~150 ms at most
      expect(waits.at(-1)).toBeLessThanOrEqual(200)
    } finally {
      replica.resume()
      monitor.disconnect()
      ix.close()
    }
  })

  it('too few replicas: ReplicationTimeoutError after timeoutMs, the master has the change, a retry is idempotent', async () => {
    const ix = new Interactions(masterClient, {
      prefix: 'w2',
      partitions: 2,
      waitForReplicas: { replicas: 2, timeoutMs: 100 }, // only one replica exists
    })
    const started = Date.now()
    const error = await ix.setLiked('8', '1', true).catch((e: unknown) => e)
    expect(Date.now() - started).toBeGreaterThanOrEqual(90)
    expect(error).toBeInstanceOf(ReplicationTimeoutError)
    expect(error).toMatchObject({
      code: 'FLOODGATE_REPLICATION_TIMEOUT',
      acknowledgedReplicas: 1,
      requiredReplicas: 2,
    })
    expect(await masterClient.sismember(ix.keys.likes('8'), '1')).toBe(1)
    // the replica dies: nobody confirms; the retry changes nothing and appends no second event
    await replica.kill()
    const retry = await ix.setLiked('8', '1', true).catch((e: unknown) => e)
    expect(retry).toMatchObject({ acknowledgedReplicas: 0, requiredReplicas: 2 })
    expect(await masterClient.xlen(ix.keys.stream(ix.keys.partitionOf('8')))).toBe(1)
    // a play retried after the error is not counted twice
    const viewer = playViewer({ userId: 3 })
    await expect(ix.recordPlay('8', viewer)).rejects.toBeInstanceOf(ReplicationTimeoutError)
    await expect(ix.recordPlay('8', viewer)).rejects.toBeInstanceOf(ReplicationTimeoutError)
    expect(await masterClient.get(ix.keys.plays('8'))).toBe('1')
    ix.close()
  })

  it('writes queued behind a WAIT that falls short are refused unrun and never run later', async () => {
    // the replica is dead (previous test): each WAIT 1 holds the write connection 400 ms. Before
    // issue 29 writes queued behind each other's WAIT on that connection, 400 ms each, and one
    // whose reply timed out could still run later, after its caller was told it failed (it
    // could undo a later, acknowledged write). Now they wait for the WAIT in flight and, as it
    // fell short, are refused without being sent.
    const caller = new Redis(master.url, { commandTimeout: 600, maxRetriesPerRequest: 1 })
    const ix = new Interactions(caller, { prefix: 'w4', waitForReplicas: { replicas: 1, timeoutMs: 400 } })
    try {
      const first = ix.setLiked('10', '1', true).catch((e: unknown) => e)
      await sleep(100) // the first write's batch is in WAIT
      const started = Date.now()
      const queued = await Promise.all(
        ['2', '3'].map((user) => ix.setLiked('10', user, true).catch((e: unknown) => e)),
      )
      expect(await first).toBeInstanceOf(ReplicationTimeoutError)
      for (const outcome of queued) expect(outcome).toMatchObject({ acknowledgedReplicas: 0 })
      expect(Date.now() - started).toBeLessThan(500) // the first WAIT's rest, not one WAIT each
      expect(await masterClient.sismember(ix.keys.likes('10'), '1')).toBe(1)
      // watch for a late run for well past the moment it would have happened (800 ms)
      const deadline = Date.now() + 1_500
      while (Date.now() < deadline) {
        expect(await masterClient.smismember(ix.keys.likes('10'), '2', '3')).toEqual([0, 0])
        await sleep(50)
      }
      // the next write is sent: it runs, still unconfirmed
      await expect(ix.setLiked('10', '4', true)).rejects.toBeInstanceOf(ReplicationTimeoutError)
      expect(await masterClient.sismember(ix.keys.likes('10'), '4')).toBe(1)
    } finally {
      ix.close()
      caller.disconnect()
    }
  })

  it("a write blocked in WAIT holds only its own connection: the caller's client keeps answering", async () => {
    // the replica is dead (previous test): WAIT 1 blocks for the whole timeout
    const ix = new Interactions(masterClient, {
      prefix: 'w3',
      waitForReplicas: { replicas: 1, timeoutMs: 1500 },
    })
    const started = Date.now()
    const blocked = ix.setLiked('9', '1', true).catch((e: unknown) => e)
    await sleep(100) // let the write reach WAIT
    await masterClient.ping()
    const pingMs = Date.now() - started
    expect(await blocked).toBeInstanceOf(ReplicationTimeoutError)
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400)
    expect(pingMs).toBeLessThan(1000) // on the caller's connection it would have waited for WAIT
    ix.close()
    await expect(ix.setLiked('9', '2', true)).rejects.toThrow() // closed: no connection left
  })
})
