// Issue 26: a like storm with the default layout spreads the write path's Redis commands evenly
// over the masters of a 3 + 3 cluster (INFO commandstats on each master, scripts' own commands
// included): every master within 15 % of the mean. A private cluster, so no other test's traffic
// counts (commandstats are per node).
import type { Cluster } from 'ioredis'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { createRedisClient, Interactions } from '../../src/index.js'
import { commandCalls } from '../support/command_stats.js'
import { PrivateCluster } from '../support/redis_cluster.js'

const VIDEOS = 3000
const LIKES_PER_VIDEO = 2
/** Client housekeeping (slot map refreshes, probes), not the write path. */
const HOUSEKEEPING = new Set(['info', 'cluster', 'command', 'ping', 'client', 'hello', 'readonly', 'select'])
let pc: PrivateCluster
let cluster: Cluster

beforeAll(async () => {
  pc = await PrivateCluster.start({ masters: 3, replicasPerMaster: 1 })
  // 5 s, not the default 2 s cap: this test counts commands, not latency, and a like storm on a
  // fresh private cluster of a loaded 2-core box must not fail a command on a scheduling stall
  cluster = createRedisClient(pc.seeds, {
    commandTimeoutMs: 5000,
    redis: { enableOfflineQueue: true },
    cluster: { enableOfflineQueue: true },
  }) as Cluster
}, 60_000)

afterAll(async () => {
  cluster?.disconnect()
  await pc?.destroy()
})

/** Write-path commands each master ran so far (INFO commandstats, housekeeping left out). */
async function commandsPerMaster(ports: readonly number[]): Promise<number[]> {
  return Promise.all(
    ports.map(async (port) => {
      const node = new Redis(port, '127.0.0.1')
      try {
        const calls = Object.entries(await commandCalls(node))
        return calls.reduce(
          (sum, [name, n]) => (HOUSEKEEPING.has(name.split('|')[0] ?? '') ? sum : sum + n),
          0,
        )
      } finally {
        node.disconnect()
      }
    }),
  )
}

it('a like storm over 3,000 videos puts every master within 15 % of the mean', async () => {
  const ports: number[] = []
  for (const node of pc.nodes) if ((await pc.role(node.port)) === 'master') ports.push(node.port)
  expect(ports).toHaveLength(3)
  const interactions = new Interactions(cluster, { prefix: 'spread' })
  const before = await commandsPerMaster(ports)
  for (let start = 1; start <= VIDEOS; start += 100) {
    const writes: Promise<unknown>[] = []
    for (let v = start; v < start + 100 && v <= VIDEOS; v++) {
      for (let u = 1; u <= LIKES_PER_VIDEO; u++)
        writes.push(interactions.setLiked(String(v), String(u), true))
    }
    await Promise.all(writes)
  }
  const after = await commandsPerMaster(ports)
  const spent = after.map((n, i) => n - (before[i] ?? 0))
  const mean = spent.reduce((a, b) => a + b, 0) / spent.length
  // each like is one script and its commands: several per like, on the partition's master
  expect(mean * spent.length).toBeGreaterThanOrEqual(VIDEOS * LIKES_PER_VIDEO * 2)
  for (const n of spent)
    expect(Math.abs(n - mean) / mean, `per master: ${spent.join(', ')}`).toBeLessThanOrEqual(0.15)
}, 120_000)
