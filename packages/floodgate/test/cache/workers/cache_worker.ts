// A cache instance in its own process, driven through a Redis pub/sub command
// channel; answers with JSON lines on stdout (see test/support/processes.ts).
// argv: <prefix> <worker index> <cache options JSON>
import { setTimeout as sleep } from 'node:timers/promises'
import { ClientTracking, createCache, createRedisClient, NOT_FOUND } from '../../../src/index.js'
import { report } from '../../support/processes.js'
import { TEST_REDIS_TARGET, testRedisClient } from '../../support/redis.js'

const [prefix = 'fgtest', index = '0', json = '{}'] = process.argv.slice(2)
const config = JSON.parse(json) as Record<string, unknown> & { redisTimeoutMs?: number }
const redis = createRedisClient(TEST_REDIS_TARGET, { commandTimeoutMs: config.redisTimeoutMs ?? 1000 })
// the test's target, single node or cluster (FLOODGATE_TEST_REDIS_CLUSTER, inherited from the test)
const plain = testRedisClient()
const commands = testRedisClient()
// l1Tracking: the L1 kept by Redis client-side caching (a long L1 TTL, so only Redis drops an entry)
const tracking = config.l1Tracking ? new ClientTracking(redis) : undefined
const cache = createCache<string>({
  redis,
  name: 'w',
  prefix,
  redisTimeoutMs: 1000,
  ...config,
  ...(tracking && { l1: { ttlMs: 600_000, tracking } }),
})
const outcomes: Record<string, number> = {}
cache.events.on('outcome', (e) => {
  outcomes[e.outcome] = (outcomes[e.outcome] ?? 0) + 1
})

interface Command {
  op: 'swarm' | 'peek' | 'invalidate' | 'clear' | 'overwrite' | 'exit'
  id: string
  key: string
  /** Run the command in this namespace of the cache (`clear` needs one). */
  namespace?: string
  callers?: number
  loaderMs?: number
  only?: number
}

async function loader(key: string, loaderMs: number): Promise<string | typeof NOT_FOUND> {
  const n = await plain.incr(`${prefix}:loads`)
  report({ event: 'loading', worker: Number(index), key, n })
  const fromDb = await plain.get(`${prefix}:db:${key}`)
  await sleep(loaderMs)
  if (fromDb === 'missing') return NOT_FOUND
  return fromDb ?? `${key}#${n}`
}

async function swarm(command: Command): Promise<void> {
  const callers = command.callers ?? 1
  const loaderMs = command.loaderMs ?? 100
  const results = await Promise.all(
    Array.from({ length: callers }, async () => {
      const started = performance.now()
      try {
        const target = command.namespace === undefined ? cache : cache.namespace(command.namespace)
        const value = await target.getOrLoad(command.key, (key) => loader(key, loaderMs))
        return { value: value ?? null, ms: performance.now() - started }
      } catch (error) {
        return { error: String(error), ms: performance.now() - started }
      }
    }),
  )
  const values = [...new Set(results.map((r) => ('value' in r ? r.value : `error:${r.error}`)))]
  report({
    id: command.id,
    worker: Number(index),
    ok: results.filter((r) => 'value' in r).length,
    values,
    maxMs: Math.max(...results.map((r) => r.ms)),
    outcomes,
  })
}

await commands.subscribe(`${prefix}:cmd`)
commands.on('message', (_channel, message) => {
  const command = JSON.parse(message) as Command
  if (command.only !== undefined && command.only !== Number(index)) return
  if (command.op === 'swarm') void swarm(command)
  else if (command.op === 'peek') {
    const entry = cache.local?.get(command.key, Date.now())
    report({ id: command.id, worker: Number(index), l1: entry === undefined ? null : String(entry.value) })
  } else if (command.op === 'invalidate') {
    void cache
      .invalidate(command.key)
      .then((result) => report({ id: command.id, worker: Number(index), result }))
  } else if (command.op === 'clear') {
    void cache
      .namespace(command.namespace ?? '')
      .clear()
      .then((result) => report({ id: command.id, worker: Number(index), result }))
  } else if (command.op === 'overwrite') {
    // a writer that does not publish on the bus (another service, a manual fix): only Redis tells
    const key = `${prefix}:c:w:{${command.key}}`
    void plain
      .getBuffer(key)
      .then((bytes) => plain.set(key, Buffer.from(bytes!.toString('latin1').replace(/"$/, '!"'), 'latin1')))
      .then(() => report({ id: command.id, worker: Number(index), at: Date.now() }))
  } else if (command.op === 'exit') {
    tracking?.close()
    cache.close()
    redis.disconnect()
    plain.disconnect()
    commands.disconnect()
    process.exit(0)
  }
})
await cache.ready
report({ event: 'ready', worker: Number(index) })
