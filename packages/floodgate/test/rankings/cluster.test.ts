import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CountsReader,
  CountsRecovery,
  createRankings,
  DecayedRankings,
  Interactions,
  playViewer,
} from '../../src/index.js'
import { createCountersSchema, seedMembers, seedPlays } from '../counters/pg_schema.js'
import { freePort } from '../support/redis_server.js'

// The read side on a real 3-master Redis Cluster: per-partition keys live on
// different nodes, so every multi-partition read must split per node.
const dir = mkdtempSync(join(tmpdir(), 'fg-cluster-'))
const servers: ChildProcess[] = []
let cluster: Cluster

beforeAll(async () => {
  const ports = [await freePort(), await freePort(), await freePort()]
  for (const port of ports) {
    servers.push(
      spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--save',
          '',
          '--appendonly',
          'no',
          '--dir',
          dir,
        ],
        { stdio: 'ignore' },
      ),
    )
  }
  for (const port of ports) {
    for (let i = 0; i < 100; i++) {
      const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => null })
      probe.on('error', () => {}) // refused until the server is up: the connect() below says so
      const ok = await probe
        .connect()
        .then(() => probe.ping())
        .catch(() => null)
      probe.disconnect()
      if (ok) break
      await sleep(50)
    }
  }
  execFileSync('redis-cli', [
    '--cluster',
    'create',
    ...ports.map((p) => `127.0.0.1:${p}`),
    '--cluster-replicas',
    '0',
    '--cluster-yes',
  ])
  for (let i = 0; i < 100; i++) {
    const info = execFileSync('redis-cli', ['-p', String(ports[0]), 'cluster', 'info']).toString()
    if (info.includes('cluster_state:ok')) break
    await sleep(100)
  }
  cluster = new Cluster(
    ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: { commandTimeout: 5000 } },
  )
  await cluster.ping()
}, 30_000)

afterAll(async () => {
  cluster?.disconnect()
  for (const s of servers) s.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

describe('on Redis Cluster', () => {
  it('spreads partitions over several nodes, and rankings and counts read across them', async () => {
    const prefix = 'clu'
    const interactions = new Interactions(cluster, { prefix, partitions: 16 })
    const owners = new Set<string>()
    for (let p = 0; p < 16; p++) {
      const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', interactions.keys.stream(p)))
      const node = cluster.slots[slot]?.[0]
      if (node) owners.add(node)
    }
    expect(owners.size).toBeGreaterThan(1)

    await cluster.set(interactions.keys.epoch(), 'e')
    for (let v = 1; v <= 20; v++) {
      for (let u = 1; u <= v; u++) await interactions.setLiked(String(v), String(u), true)
      await interactions.recordPlay(String(v), playViewer({ userId: '1' }))
    }
    const rankings = createRankings({ redis: cluster, prefix, partitions: 16 })
    const all = await rankings.top({ metric: 'likes', window: 'all', limit: 5 })
    expect(all.map((e) => e.itemId)).toEqual(['20', '19', '18', '17', '16'])
    const hour = await rankings.top({ metric: 'likes', window: '1h', limit: 3 })
    expect(hour.map((e) => e.itemId)).toEqual(['20', '19', '18'])
    // Plays: one each; ties break newer (higher id) first.
    const plays = await rankings.top({ metric: 'plays', window: '24h', limit: 3 })
    expect(plays.map((e) => e.itemId)).toEqual(['20', '19', '18'])

    const reader = new CountsReader({ redis: cluster, prefix, partitions: 16, timeoutMs: 5000 })
    const read = await reader.readCounts(['3', '4', '20'], '4')
    expect(read.ok).toBe(true)
    if (read.ok) {
      expect(read.counts.get('3')).toEqual({
        likes: 3,
        favorites: 0,
        plays: 1,
        liked: false,
        favorited: false,
      })
      expect(read.counts.get('20')).toMatchObject({ likes: 20, liked: true })
    }

    const decayed = new DecayedRankings({ redis: cluster, prefix, partitions: 16 })
    for (let v = 1; v <= 5; v++) for (let i = 0; i < v; i++) await decayed.record(String(v), 'plays')
    expect((await decayed.top({ metric: 'plays', window: '1h', limit: 2 })).map((e) => e.itemId)).toEqual([
      '5',
      '4',
    ])
  })

  it('rebuilds from PostgreSQL and commits the epoch (lock and marker share a slot)', async () => {
    const prefix = 'clr'
    const schema = await createCountersSchema('clr', 40)
    try {
      for (let v = 1; v <= 40; v += 3) await seedMembers(schema.db, 'likes', v, [100, 200, v])
      await seedPlays(schema.db, 7, 4)
      const recovery = new CountsRecovery({
        redis: cluster,
        sql: schema.db,
        prefix,
        partitions: 16,
        chunkSize: 7,
      })
      expect(await recovery.check()).toBe('rebuilding')
      for (let i = 0; i < 300 && !recovery.serving(); i++) await sleep(10)
      expect(recovery.serving()).toBe(true)
      expect(await cluster.get(`${prefix}:epoch:v2`)).not.toBeNull()
      const report = await recovery.reconcile()
      expect(report).toEqual({ checked: 40, drifted: [], columnDrift: [] })
      const rankings = createRankings({ redis: cluster, prefix, partitions: 16 })
      expect((await rankings.top({ metric: 'likes', window: 'all', limit: 2 })).map((e) => e.itemId)).toEqual(
        ['40', '37'],
      )
    } finally {
      await schema.drop()
    }
  })
})
