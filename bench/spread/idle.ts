/**
 * Issue 26: what many partitions cost the flush consumer when there is nothing to flush, and how
 * long a lone event waits. For P = 16 and P = 300 partition streams: one `StreamGroupConsumer`
 * over every partition stream (group `flush`, the member set on, as `createInteractionFlush`
 * runs it) with an empty handler; after a warm-up, the Redis commands per second it causes while
 * idle (`INFO commandstats` deltas on every master, scripts' own commands included, INFO left
 * out), by command; then the flush lag of single events (XADD to a random partition, time until
 * the handler has it), 20 of them, 150–450 ms apart.
 *
 *   node --conditions=floodgate-source --import tsx bench/spread/idle.ts [--cluster host:port,…] [--seconds 10]
 *
 * Without `--cluster`: a private redis-server. Keys under a unique prefix, deleted afterwards.
 */
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { deleteByPrefix, PrivateRedis } from '@floodgate/test-support'
import { createRedisClient, InteractionKeys, type RedisClient, StreamGroupConsumer } from 'floodgate'
import type { Cluster, Redis } from 'ioredis'

const { values: args } = parseArgs({
  options: { cluster: { type: 'string' }, seconds: { type: 'string', default: '10' } },
})
const SECONDS = Number(args.seconds)
const EVENTS = 20

/** Calls per command on every master (INFO commandstats), INFO left out. */
async function commandCalls(redis: RedisClient): Promise<Map<string, number>> {
  const nodes: Redis[] = redis.isCluster ? (redis as Cluster).nodes('master') : [redis as Redis]
  const calls = new Map<string, number>()
  for (const node of nodes) {
    for (const m of (await node.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
      const name = m[1] ?? ''
      if (name !== 'info') calls.set(name, (calls.get(name) ?? 0) + Number(m[2]))
    }
  }
  return calls
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

async function measure(redis: RedisClient, partitions: number) {
  const prefix = `bench:idle:${randomBytes(4).toString('hex')}`
  const keys = new InteractionKeys(prefix, partitions)
  const arrived = new Map<string, number>()
  const consumer = new StreamGroupConsumer(redis, {
    sources: keys.allPartitions().map((p) => ({ stream: keys.stream(p), deadLetter: keys.dead(p) })),
    group: 'flush',
    membersKey: keys.flushMembers('flush'),
    handler: async (entries) => {
      for (const e of entries) arrived.set(e.id, Date.now())
      return undefined
    },
  })
  try {
    consumer.start()
    await sleep(3000) // groups created, first heartbeat, first claim round
    const before = await commandCalls(redis)
    await sleep(SECONDS * 1000)
    const after = await commandCalls(redis)
    const perSecond = [...after]
      .map(([name, n]) => [name, (n - (before.get(name) ?? 0)) / SECONDS] as const)
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1])
    const total = perSecond.reduce((sum, [, n]) => sum + n, 0)
    const lags: number[] = []
    for (let i = 0; i < EVENTS; i++) {
      const stream = keys.stream(Math.floor(Math.random() * partitions))
      const sent = Date.now()
      const id = String(await redis.call('XADD', stream, '*', 'k', 'probe'))
      while (!arrived.has(id) && Date.now() - sent < 10_000) await sleep(2)
      lags.push((arrived.get(id) ?? Number.NaN) - sent)
      await sleep(150 + Math.random() * 300)
    }
    lags.sort((a, b) => a - b)
    return {
      partitions,
      idleCommandsPerSecond: Math.round(total),
      byCommand: Object.fromEntries(perSecond.slice(0, 8).map(([name, n]) => [name, Math.round(n)])),
      lagP50Ms: percentile(lags, 50),
      lagMaxMs: lags[lags.length - 1] ?? 0,
    }
  } finally {
    await consumer.stop()
    await deleteByPrefix(redis, prefix)
  }
}

const server = args.cluster === undefined ? await PrivateRedis.start() : undefined
// 5 s, not the default 2 s cap: this counts the idle consumer's commands; a stall of the shared box
// must not turn a measurement into a failed command (the service keeps the 2 s default)
const redis = createRedisClient(args.cluster?.split(',') ?? server?.url ?? '', { commandTimeoutMs: 5000 })
try {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve))
  for (const partitions of [16, 300]) console.log(JSON.stringify(await measure(redis, partitions)))
} finally {
  redis.disconnect()
  await server?.destroy()
}
