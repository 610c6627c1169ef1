// Issue 29, the wait off: a write refused with CLUSTERDOWN (every shard refuses every command from
// a master's failure to its replica's promotion) is resent by the library every 100 ms until the
// command cap, whatever the client's own retryDelayOnClusterDown (video-api sets it to 0 so reads
// fall back at once), so a healthy shard's write outlasts the failover. A FakeNode plays the node.
import { Redis } from 'ioredis'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../src/errors/index.js'
import { Interactions } from '../../src/interactions/index.js'
import { floodgateRedisOptions } from '../../src/redis/index.js'
import { FakeNode } from '../support/fake_node.js'

let node: FakeNode
let client: Redis

beforeEach(async () => {
  node = await FakeNode.start()
  // production options: 2 s command cap (REDIS_MAX_WAIT_MS), no offline queue
  client = new Redis(node.port, '127.0.0.1', floodgateRedisOptions())
  client.on('error', () => {})
  await new Promise((resolve) => client.once('ready', resolve))
})

afterEach(async () => {
  client.disconnect()
  await node.close()
})

const timed = async (ix: Interactions) => {
  const started = Date.now()
  const error = await ix.setLiked('7', '1', true).then(
    () => undefined,
    (e: unknown) => e,
  )
  return { ms: Date.now() - started, error }
}

it.each([1, 256])(
  'without WAIT (maxEventsPerCall %i): a CLUSTERDOWN is resent until the command cap',
  async (maxEventsPerCall) => {
    node.mode = 'clusterDown'
    const down = await timed(new Interactions(client, { prefix: 'rsw', maxEventsPerCall }))
    // before: refused at once, sent once
    expect(down.error).toBeInstanceOf(StoreUnavailableError)
    expect(String(down.error)).toMatch(/CLUSTERDOWN/)
    expect(down.ms).toBeGreaterThanOrEqual(1800)
    expect(node.scriptCalls).toBeGreaterThan(10)
  },
)

it('without WAIT: a lost connection is not resent (the write may have run)', async () => {
  node.mode = 'dead'
  await node.close() // the open connection too
  const lost = await timed(new Interactions(client, { prefix: 'rsw' }))
  expect(lost.error).toBeInstanceOf(StoreUnavailableError)
  expect(lost.ms).toBeLessThan(500)
})
