// Issue 29: on Redis Cluster the service's client hands a CLUSTERDOWN to its caller at once. The
// cluster answers CLUSTERDOWN on every shard from a master's failure to its replica's promotion;
// ioredis resent it every 100 ms up to 16 times, so a write request's video lookup (cache, Bloom
// gate) held the request up to 1.6 s before falling back to PostgreSQL, and the failed shard's
// write then answered 503 after 1.2–2.1 s ("Connection is closed") instead of within its WAIT
// timeout. A FakeNode (packages/floodgate/test/support) plays a node of a cluster that is down.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { connectRedis, type RedisHandle } from '../src/redis/connect.js'

/** floodgate's FakeNode, the subset used here; imported at run time (video-api's rootDir). */
interface FakeNode {
  readonly port: number
  mode: 'dead' | 'rejoining' | 'clusterDown'
  readonly keyCalls: number
  close(): Promise<void>
}
const fakeNodeModule = new URL('../../../packages/floodgate/test/support/fake_node.ts', import.meta.url)

const dataDir = mkdtempSync(join(tmpdir(), 'va-cluster-down-'))
let node: FakeNode
let handle: RedisHandle

beforeAll(async () => {
  const { FakeNode } = (await import(fakeNodeModule.href)) as { FakeNode: { start(): Promise<FakeNode> } }
  node = await FakeNode.start()
  node.mode = 'clusterDown'
  handle = await connectRedis({
    redisUrl: undefined,
    redisClusterNodes: `127.0.0.1:${node.port}`,
    dataDir,
    redisMaxWaitMs: 2000,
  })
})

afterAll(async () => {
  await handle?.close()
  await node?.close()
  rmSync(dataDir, { recursive: true, force: true })
})

it('a command refused with CLUSTERDOWN fails at once, sent once', async () => {
  const started = Date.now()
  const error = await handle.client.get('video:1').then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(String(error)).toMatch(/CLUSTERDOWN/)
  // before: sent 16 times, 100 ms apart (1.6 s)
  expect(node.keyCalls).toBe(1)
  expect(Date.now() - started).toBeLessThan(500)
})
