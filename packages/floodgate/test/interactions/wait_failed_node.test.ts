// Issue 29: with `waitForReplicas`, a write for a failed master answers within its WAIT timeout
// + 100 ms even when that node is back at its address answering CLUSTERDOWN (restarted, not yet
// rejoined as the new master's replica), while a healthy master's CLUSTERDOWN (the whole cluster
// pauses until the failed shard's replica is promoted) is still waited out to the command cap;
// and a dead node is not reconnected once per batch. A FakeNode plays the node in each state.
import { Redis } from 'ioredis'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../src/errors/index.js'
import { Interactions } from '../../src/interactions/index.js'
import { floodgateRedisOptions } from '../../src/redis/index.js'
import { FakeNode } from '../support/fake_node.js'

const WAIT_MS = 300
let node: FakeNode
let client: Redis
let ix: Interactions

beforeEach(async () => {
  node = await FakeNode.start()
  // production options: 2 s command cap (REDIS_MAX_WAIT_MS), no offline queue
  client = new Redis(node.port, '127.0.0.1', floodgateRedisOptions())
  client.on('error', () => {})
  // connected before a test turns the node dead: a late connect (and its reconnects) would count
  await new Promise((resolve) => client.once('ready', resolve))
  ix = new Interactions(client, { prefix: 'wfn', waitForReplicas: { replicas: 1, timeoutMs: WAIT_MS } })
})

afterEach(async () => {
  ix.close()
  client.disconnect()
  await node.close()
})

const timed = async (item: string) => {
  const started = Date.now()
  const error = await ix.setLiked(item, '1', true).then(
    () => undefined,
    (e: unknown) => e,
  )
  return { ms: Date.now() - started, error }
}

it('the failed master, restarted and answering CLUSTERDOWN: refused within the WAIT timeout + 100 ms', async () => {
  node.mode = 'dead'
  const lost = await timed('1')
  expect(lost.error).toBeInstanceOf(StoreUnavailableError)
  node.mode = 'rejoining'
  const down = await timed('1')
  // before: resent every 100 ms until the 2 s command cap, then refused
  expect(down.error).toBeInstanceOf(StoreUnavailableError)
  expect(String(down.error)).toMatch(/CLUSTERDOWN/)
  expect(down.ms).toBeLessThan(WAIT_MS + 100)
})

it('a healthy master answering CLUSTERDOWN (the cluster waits for a promotion): resent until the command cap', async () => {
  node.mode = 'clusterDown'
  const down = await timed('2')
  expect(down.error).toBeInstanceOf(StoreUnavailableError)
  expect(down.ms).toBeGreaterThanOrEqual(1900)
  expect(node.scriptCalls).toBeGreaterThan(10)
})

it('a dead node is reconnected at most once per 100 ms, not once per batch', async () => {
  node.mode = 'dead'
  const before = node.connections
  const started = Date.now()
  const answers: number[] = []
  for (let i = 0; i < 40; i++) {
    const { ms, error } = await timed('3')
    expect(error).toBeInstanceOf(StoreUnavailableError)
    answers.push(ms)
  }
  const elapsedMs = Date.now() - started
  // before: one connect per write (40); now two, then one per 100 ms pause
  expect(node.connections - before).toBeLessThanOrEqual(2 + Math.ceil(elapsedMs / 100))
  expect(Math.max(...answers)).toBeLessThan(100)
})
