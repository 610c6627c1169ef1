// Three caches on one client, then `redis.quit()`: the process must exit by itself (no
// subscriber connection left open). Reports how many pub/sub connections the client opened.
import { createCache, createRedisClient } from '../../../src/index.js'
import { TEST_REDIS_TARGET } from '../../support/redis.js'

const [prefix, name] = process.argv.slice(2) as [string, string]
const redis = createRedisClient(TEST_REDIS_TARGET, { redis: { connectionName: name } })
const caches = ['a', 'b', 'c'].map((cache) => createCache<string>({ redis, prefix, name: cache }))
await Promise.all(caches.map((cache) => cache.ready))
await caches[0]?.getOrLoad('k', async () => 'v')
const list = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
const pubsub = list.split('\n').filter((line) => line.includes(` name=${name} `)).length
process.stdout.write(`${JSON.stringify({ pubsub })}\n`)
await redis.quit()
