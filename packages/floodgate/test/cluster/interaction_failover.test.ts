// Issue 29: a Redis Cluster failover hurts only the failed shard, and only for as long as it
// must. A private 3+3 cluster (cluster-node-timeout 1 s), interaction writes with
// `waitForReplicas: { replicas: 1, timeoutMs: 500 }` on a client with the production options,
// one writer per item (each bound to its own item and user, liking and unliking), a flush
// consumer applying the partition streams to PostgreSQL. The master serving item 1 is SIGKILLed;
// its replica is promoted; the killed node restarts and rejoins as the new master's replica.
// Per phase (before the kill / until the promotion / until the replica is back / after):
// - healthy shards: every write acknowledged;
// - the failed shard: every write answers within the WAIT timeout + 100 ms, acknowledged or with
//   a documented error (ReplicationTimeoutError, StoreUnavailableError), never a 2 s timeout;
// - the flush: every event written before the kill is applied within 2 s of the promotion
//   (not after the 30 s idle claim);
// - nothing acknowledged lost: PostgreSQL ends with each (item, user)'s last acknowledged state.
// The nodes run at hz 100: Redis times WAIT out on its server cron (1000/hz ms late at most),
// so the bound measures what floodgate adds. About 30 s.
import { setTimeout as sleep } from 'node:timers/promises'
import { byPhase, FAILOVER_PHASES, LoopStalls } from '@floodgate/test-support'
import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  createInteractionFlush,
  createRedisClient,
  Interactions,
  ReplicationTimeoutError,
  StoreUnavailableError,
} from '../../src/index.js'
import type { SqlDatabase, SqlExecutor } from '../../src/sql/executor.js'
import { type CountersSchema, createCountersSchema } from '../counters/pg_schema.js'
import { keySlot } from '../support/key_slot.js'
import { PrivateCluster } from '../support/redis_cluster.js'

const WAIT_MS = 500
const PARTITIONS = 16
const ITEMS = 18
const PREFIX = 'ixfo'
let pc: PrivateCluster
let client: Cluster
let schema: CountersSchema

beforeAll(async () => {
  pc = await PrivateCluster.start({ masters: 3, replicasPerMaster: 1, nodeTimeoutMs: 1000 })
  for (const { port } of pc.nodes) await pc.configSet(port, 'hz', '100')
  client = createRedisClient(pc.seeds) as Cluster // production options: 2 s cap, no offline queue
  for (let i = 0; i < 100 && client.status !== 'ready'; i++) await sleep(50)
  schema = await createCountersSchema('ixfo', ITEMS)
}, 60_000)

afterAll(async () => {
  client?.disconnect()
  await pc?.destroy()
  await schema?.drop()
})

interface Sample {
  atMs: number
  ms: number
  item: number
  onVictim: boolean
  outcome: 'acked' | 'ReplicationTimeoutError' | 'StoreUnavailableError' | 'other'
  message: string
}

it('a master failover: healthy shards never fail, the failed shard answers in time, the flush resumes at once', async () => {
  const ix = new Interactions(client, {
    prefix: PREFIX,
    partitions: PARTITIONS,
    waitForReplicas: { replicas: 1, timeoutMs: WAIT_MS },
  })
  // the real database, with a gate: the test holds one flush batch at its COMMIT (applied, not
  // yet acknowledged) while it kills the master, so that batch's XACK fails during the failover
  // and its entries stay pending on the promoted replica
  let gate: { held: () => void; released: Promise<void> } | undefined
  const db: SqlDatabase = Object.assign(Object.create(schema.db) as SqlDatabase, {
    transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
      return schema.db.transaction(async (tx) => {
        const result = await fn(tx)
        const g = gate
        if (g) {
          gate = undefined
          g.held()
          await g.released
        }
        return result
      })
    },
  })
  const flush = createInteractionFlush(client, db, {
    prefix: PREFIX,
    partitions: PARTITIONS,
    batchSize: 50,
    pollIntervalMs: 20,
    // claimIdleMs: the default (30 s), as FLUSH_CLAIM_IDLE_MS in the issue
  })
  await flush.ensureGroups()
  flush.start()

  const slotOf = (item: number) => keySlot(ix.keys.likes(String(item)))
  const victim = await pc.masterOf(slotOf(1))
  const onVictim = new Map<number, boolean>()
  for (let item = 1; item <= ITEMS; item++) onVictim.set(item, (await pc.masterOf(slotOf(item))) === victim)
  expect([...onVictim.values()].filter(Boolean).length).toBeGreaterThan(2)
  expect([...onVictim.values()].filter((v) => !v).length).toBeGreaterThan(2)

  // the flush is through `epochMs` when every event written before it, on every partition, is
  // applied (acknowledged): none pending, none undelivered
  const streams = ix.keys.allPartitions().map((p) => ix.keys.stream(p))
  const flushedThrough = async (epochMs: number) => {
    for (const stream of streams) {
      const [count, smallest] = (await client.call('XPENDING', stream, 'flush')) as [number, string | null]
      if (count > 0 && smallest !== null && Number(smallest.split('-')[0]) < epochMs) return false
      const groups = (await client.call('XINFO', 'GROUPS', stream)) as unknown[][]
      const last = String(groups[0]?.[groups[0].indexOf('last-delivered-id') + 1] ?? '0-0')
      const xinfo = (await client.call('XINFO', 'STREAM', stream)) as unknown[]
      const lastGenerated = String(xinfo[xinfo.indexOf('last-generated-id') + 1])
      if (Number(last.split('-')[0]) < epochMs && last !== lastGenerated) return false
    }
    return true
  }

  const t0 = Date.now()
  const samples: Sample[] = []
  const stalls = new LoopStalls() // on a loaded CI box this process's own stalls lengthen answers
  const states = new Map<number, { state: boolean; acked: boolean }[]>() // item (its own user 1) → attempts
  let running = true
  const writer = async (item: number) => {
    let state = true
    const attempts: { state: boolean; acked: boolean }[] = []
    states.set(item, attempts)
    while (running) {
      const start = Date.now()
      let outcome: Sample['outcome'] = 'acked'
      let message = ''
      try {
        await ix.setLiked(String(item), '1', state)
      } catch (error) {
        message = String((error as Error)?.message)
        outcome =
          error instanceof ReplicationTimeoutError
            ? 'ReplicationTimeoutError'
            : error instanceof StoreUnavailableError
              ? 'StoreUnavailableError'
              : 'other'
      }
      samples.push({
        atMs: start - t0,
        ms: Date.now() - start,
        item,
        onVictim: onVictim.get(item)!,
        outcome,
        message,
      })
      attempts.push({ state, acked: outcome === 'acked' })
      if (outcome === 'acked') state = !state // a refused write is retried until acknowledged
      // ~20 writes/s per writer: a pace the one flush consumer keeps up with, so its lag measures the failover
      await sleep(50)
    }
  }
  const loops = Promise.all(Array.from({ length: ITEMS }, (_, i) => writer(i + 1)))

  try {
    await sleep(3000)
    let release = () => {}
    const released = new Promise<void>((resolve) => {
      release = resolve
    })
    await new Promise<void>((held) => {
      gate = { held, released }
    })
    const killedAt = Date.now() - t0
    await pc.kill(victim)
    release()
    await pc.waitForOk(20_000)
    const promotedAt = Date.now() - t0
    const promotedAtEpoch = Date.now()
    // from the promotion on, poll (in the background) until the flush is through the promotion
    let flushedAt = Number.POSITIVE_INFINITY
    const flushWatch = (async () => {
      const deadline = Date.now() + 40_000
      while (Date.now() < deadline) {
        if (await flushedThrough(promotedAtEpoch).catch(() => false)) {
          flushedAt = Date.now() - t0
          return
        }
        await sleep(50)
      }
    })()
    const promoted = await pc.masterOf(slotOf(1))
    expect(promoted).not.toBe(victim)
    await sleep(1000) // the failed shard has a master and no replica
    await pc.restart(victim)
    await pc.configSet(victim, 'hz', '100')
    await pc.waitForReplicas(20_000)
    const replicaAt = Date.now() - t0
    await sleep(3000)
    running = false
    await loops
    const endAt = Date.now() - t0
    await flushWatch

    // less what this process's own event-loop stalls added to the answer
    stalls.stop()
    const stalled = (s: Sample) => stalls.during(t0 + s.atMs, t0 + s.atMs + s.ms)
    const phases = byPhase(samples, FAILOVER_PHASES, [killedAt, promotedAt, replicaAt], endAt)
    const table = phases.map(({ phase, samples: inPhase }) => {
      const healthy = inPhase.filter((s) => !s.onVictim)
      const failed = inPhase.filter((s) => s.onVictim)
      return {
        name: phase.name,
        ms: phase.toMs - phase.fromMs,
        healthyAcked: healthy.filter((s) => s.outcome === 'acked').length,
        healthyRefused: healthy.filter((s) => s.outcome !== 'acked').length,
        failedAcked: failed.filter((s) => s.outcome === 'acked').length,
        failedRefused: failed.filter((s) => s.outcome !== 'acked').length,
        failedSlowestMs: Math.max(0, ...failed.map((s) => s.ms)),
        failedLate: failed
          .filter((s) => s.ms - stalled(s) > WAIT_MS + 100)
          .map((s) => `${s.atMs}: ${s.ms} ms (${stalled(s)} ms stalled) ${s.outcome} ${s.message}`),
        healthySlowestMs: Math.max(0, ...healthy.map((s) => s.ms)),
        errors: [
          ...new Set(
            inPhase
              .filter((s) => s.outcome !== 'acked')
              .map((s) => `${s.outcome}: ${s.message}`.slice(0, 120)),
          ),
        ].slice(0, 6),
      }
    })
    console.info(
      `interaction failover: promoted ${promotedAt - killedAt} ms after the kill, flushed through the promotion ` +
        `${flushedAt - promotedAt} ms after the promotion\n${JSON.stringify(table, null, 1)}`,
    )

    // the failed shard answers in time in every phase, with the documented outcomes only
    expect(samples.filter((s) => s.outcome === 'other').map((s) => s.message)).toEqual([])
    expect(table.map((t) => t.failedLate)).toEqual([[], [], [], []])
    // healthy shards: nothing refused in any phase (CLUSTERDOWN until the promotion is retried;
    // after it a failure on one node cut no other)
    expect(table.map((t) => t.healthyRefused)).toEqual([0, 0, 0, 0])
    expect(table[0]!.failedRefused).toBe(0)
    expect(table[3]!.failedAcked).toBeGreaterThan(0)
    // the flush re-read its own pending entries once the promoted master answered
    expect(flushedAt - promotedAt).toBeLessThan(2000)

    // nothing acknowledged lost: after the drain PostgreSQL holds each item's last acknowledged
    // state (or, after it, that of an attempt whose answer was an error: it may have landed)
    const drained = async () => {
      for (const p of ix.keys.allPartitions()) {
        const stream = ix.keys.stream(p)
        const [count] = (await client.call('XPENDING', stream, 'flush')) as [number]
        if (count > 0) return false
        const groups = (await client.call('XINFO', 'GROUPS', stream)) as unknown[][]
        const last = String(groups[0]?.[groups[0].indexOf('last-delivered-id') + 1])
        const xinfo = (await client.call('XINFO', 'STREAM', stream)) as unknown[]
        if (last !== String(xinfo[xinfo.indexOf('last-generated-id') + 1])) return false
      }
      return true
    }
    const drainDeadline = Date.now() + 30_000
    while (!(await drained()) && Date.now() < drainDeadline) await sleep(100)
    const { rows } = await schema.pool.query<{ item: string; n: number; count: number }>(
      `SELECT i.id::text AS item, i.like_count::int AS count,
              (SELECT count(*)::int FROM item_likes l WHERE l.item_id = i.id AND l.user_id = 1) AS n
         FROM items i WHERE i.id <= $1`,
      [ITEMS],
    )
    const wrong: string[] = []
    for (const row of rows) {
      const attempts = states.get(Number(row.item)) ?? []
      const lastAcked = attempts.map((a) => a.acked).lastIndexOf(true)
      const allowed = new Set([lastAcked >= 0 ? attempts[lastAcked]!.state : false])
      for (const a of attempts.slice(lastAcked + 1)) allowed.add(a.state)
      if (!allowed.has(row.n === 1) || row.count !== row.n) wrong.push(`${row.item}: ${JSON.stringify(row)}`)
    }
    expect(wrong).toEqual([])
  } finally {
    running = false
    await loops
    await flush.stop()
    ix.close()
  }
}, 120_000)
