// BloomFilter (and the Mutex its rebuild takes) on a real 3-master Redis Cluster,
// started privately for this file: no CROSSSLOT errors, shards spread over nodes.
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { Cluster, Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BloomFilter, KeySpace, Mutex } from '../../src/index.js'
import { floodgateRedisOptions } from '../../src/redis/index.js'
import { freePort } from '../support/redis_server.js'

const run = promisify(execFile)
const dir = mkdtempSync(join(tmpdir(), 'fg-cluster-'))
const servers: ChildProcess[] = []
const ports: number[] = []
let cluster: Cluster

beforeAll(async () => {
  for (let i = 0; i < 3; i++) {
    const port = await freePort()
    ports.push(port)
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes']
    args.push('--cluster-config-file', join(dir, `nodes-${port}.conf`), '--save', '', '--appendonly', 'no')
    servers.push(spawn('redis-server', [...args, '--dir', dir], { stdio: 'ignore' }))
  }
  for (const port of ports) {
    for (let i = 0; ; i++) {
      const ok = await run('redis-cli', ['-p', String(port), 'ping']).then(
        (r) => r.stdout.includes('PONG'),
        () => false,
      )
      if (ok) break
      if (i > 100) throw new Error(`redis-server ${port} did not start`)
      await sleep(50)
    }
  }
  const nodes = ports.map((p) => `127.0.0.1:${p}`)
  await run('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'])
  for (let i = 0; ; i++) {
    const info = await run('redis-cli', ['-p', String(ports[0]), 'cluster', 'info'])
    if (info.stdout.includes('cluster_state:ok')) break
    if (i > 200) throw new Error('cluster did not reach cluster_state:ok')
    await sleep(50)
  }
  cluster = new Cluster(
    ports.map((port) => ({ host: '127.0.0.1', port })),
    { redisOptions: floodgateRedisOptions({ commandTimeoutMs: 2000 }) },
  )
  for (let i = 0; i < 100 && cluster.status !== 'ready'; i++) await sleep(50)
}, 60_000)

afterAll(async () => {
  cluster?.disconnect()
  await Promise.all(
    servers.map((s) => {
      const exited = new Promise((resolve) => s.once('exit', resolve))
      s.kill('SIGKILL')
      return exited
    }),
  )
  rmSync(dir, { recursive: true, force: true })
})

describe('on Redis Cluster', () => {
  it('a sharded BloomFilter rebuilds, adds and answers; its shards live on several nodes', async () => {
    const bloom = new BloomFilter({
      redis: cluster,
      prefix: 'fg',
      name: 'videos',
      bits: 60_000,
      hashes: 5,
      shards: 6,
    })
    const items = Array.from({ length: 3000 }, (_, i) => `v:${i}`)
    const { generation } = await bloom.rebuild(
      (async function* () {
        yield items.slice(0, 1500)
        yield items.slice(1500, 2000)
      })(),
    )
    await bloom.add(items.slice(2000))
    expect((await bloom.mightContain(items)).every(Boolean)).toBe(true)
    const absent = await bloom.mightContain(Array.from({ length: 2000 }, (_, i) => `absent:${i}`))
    expect(absent.filter(Boolean).length).toBeLessThan(100)
    expect(bloom.stats.failOpenRedisError).toBe(0)

    const nodesHoldingShards = new Set<number>()
    for (const port of ports) {
      const node = new Redis(port, '127.0.0.1')
      for (const key of bloom.keys(generation).shards) {
        // a node answers EXISTS only for slots it serves (MOVED otherwise)
        if ((await node.exists(key).catch(() => 0)) === 1) nodesHoldingShards.add(port)
      }
      node.disconnect()
    }
    expect(nodesHoldingShards.size).toBeGreaterThan(1)
  })

  it('the Mutex (two keys in one Lua step) works on a cluster', async () => {
    const mutex = Mutex.named(cluster, new KeySpace('fg'), 'job', { ttlMs: 2000 })
    const lease = await mutex.tryAcquire()
    expect(lease?.fencingToken).toBe(1)
    expect(await mutex.tryAcquire()).toBeNull()
    expect(await lease?.extend()).toBe(true)
    expect(await lease?.release()).toBe(true)
    expect((await mutex.tryAcquire())?.fencingToken).toBe(2)
  })
})
