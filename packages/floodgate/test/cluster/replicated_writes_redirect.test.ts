// `waitForReplicas` writes (ReplicatedWrites) follow a cluster's redirects themselves. Behind NAT
// (a cluster in containers, reached through the client's `natMap`) a redirect names the node's
// announced address, which only the natMap makes reachable: a MOVED write must go where the
// natMap sends that address, as ioredis does for its own commands. A private 3+3 cluster whose
// nodes announce unresolvable host names (`n<port>.floodgate.invalid`), mapped back to
// 127.0.0.1 by the client's natMap.
import { setTimeout as sleep } from 'node:timers/promises'
import { type Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createRedisClient, Interactions } from '../../src/index.js'
import { keySlot } from '../support/key_slot.js'
import { PrivateCluster } from '../support/redis_cluster.js'

const HOST = /^n(\d+)\.floodgate\.invalid:(\d+)$/
let pc: PrivateCluster
let client: Cluster

function admin(port: number): Redis {
  const connection = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0 })
  connection.on('error', () => {})
  return connection
}

async function onEveryNode<T>(fn: (node: Redis) => Promise<T>): Promise<T[]> {
  const out: T[] = []
  for (const { port } of pc.nodes) {
    const node = admin(port)
    try {
      out.push(await fn(node))
    } finally {
      node.disconnect()
    }
  }
  return out
}

beforeAll(async () => {
  pc = await PrivateCluster.start({ masters: 3, replicasPerMaster: 1 })
  await onEveryNode(async (node) => {
    const port = node.options.port
    await node.config('SET', 'cluster-announce-hostname', `n${port}.floodgate.invalid`)
    await node.config('SET', 'cluster-preferred-endpoint-type', 'hostname')
  })
  // host names travel by gossip: wait until every node names every other by its host name
  for (let i = 0; ; i++) {
    const endpoints = (
      await onEveryNode(
        async (node) => (await node.call('CLUSTER', 'SLOTS')) as [number, number, ...[string][]][],
      )
    ).flatMap((slots) => slots.flatMap(([, , ...nodes]) => nodes.map(([host]) => host)))
    if (endpoints.every((h) => h.endsWith('.floodgate.invalid'))) break
    if (i > 200) throw new Error(`host names not propagated: ${endpoints.join(' ')}`)
    await sleep(50)
  }
  client = createRedisClient(pc.seeds, {
    cluster: {
      natMap: (key: string) => {
        const m = HOST.exec(key)
        return m ? { host: '127.0.0.1', port: Number(m[2]) } : null
      },
    },
  }) as Cluster
  for (let i = 0; i < 100 && client.status !== 'ready'; i++) await sleep(50)
}, 60_000)

afterAll(async () => {
  client?.disconnect()
  await pc?.destroy()
})

/** Ports of two different masters: the one serving `slot` and another. */
async function twoMasters(slot: number): Promise<{ from: number; to: number; fromId: string; toId: string }> {
  const from = await pc.masterOf(slot)
  const masters = new Set<number>()
  for (let s = 0; s < 16384; s += 1000) masters.add(await pc.masterOf(s))
  const to = [...masters].find((p) => p !== from)!
  const [fromId, toId] = await Promise.all(
    [from, to].map(async (port) => {
      const node = admin(port)
      try {
        return String(await node.call('CLUSTER', 'MYID'))
      } finally {
        node.disconnect()
      }
    }),
  )
  return { from, to, fromId: fromId!, toId: toId! }
}

it('a write refused with MOVED goes to the node the natMap maps the redirect to', async () => {
  const ix = new Interactions(client, { prefix: 'rwnat', waitForReplicas: { replicas: 1, timeoutMs: 1000 } })
  try {
    const slot = keySlot(ix.keys.likes('1'))
    const { from, to, fromId, toId } = await twoMasters(slot)
    // the client's slot map: natMapped addresses
    expect(client.slots[slot]?.[0]).toBe(`127.0.0.1:${from}`)
    // the slot (empty) moves to another master behind the client's back: its next write is MOVED
    const target = admin(to)
    const source = admin(from)
    try {
      await target.call('CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId)
      await source.call('CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId)
      await target.call('CLUSTER', 'SETSLOT', slot, 'NODE', toId)
      await source.call('CLUSTER', 'SETSLOT', slot, 'NODE', toId)
    } finally {
      target.disconnect()
      source.disconnect()
    }
    expect(client.slots[slot]?.[0]).toBe(`127.0.0.1:${from}`) // still stale
    const result = await ix.setLiked('1', '7', true)
    expect(result).toMatchObject({ changed: true, active: true, count: 1 })
    const node = admin(to)
    try {
      expect(await node.sismember(ix.keys.likes('1'), '7')).toBe(1)
    } finally {
      node.disconnect()
    }
  } finally {
    ix.close()
  }
})
