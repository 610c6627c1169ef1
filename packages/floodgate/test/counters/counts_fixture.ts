import { Redis } from 'ioredis'
import { floodgateRedisOptions, Interactions } from '../../src/index.js'
import { uniquePrefix } from '../support/redis.js'
import { PrivateRedis } from '../support/redis_server.js'
import { type CountersSchema, createCountersSchema } from './pg_schema.js'

/** A private redis-server (epoch marker set) and a counters schema with items 1…n. */
export interface CountsFixture {
  server: PrivateRedis
  redis: Redis
  schema: CountersSchema
  prefix: string
  interactions: Interactions
  /** SCARD calls the server ran so far (INFO commandstats): a counts read of n ids sends 2n. */
  scardCalls(): Promise<number>
  close(): Promise<void>
}

export async function createCountsFixture(label: string, items: number): Promise<CountsFixture> {
  const server = await PrivateRedis.start()
  const redis = new Redis(server.url, floodgateRedisOptions({ commandTimeoutMs: 2000 }))
  redis.on('error', () => undefined) // tests kill the server
  const schema = await createCountersSchema(label, items)
  const prefix = uniquePrefix(label)
  const interactions = new Interactions(redis, { prefix, partitions: 4 })
  await redis.set(interactions.keys.epoch(), 'e1')
  return {
    server,
    redis,
    schema,
    prefix,
    interactions,
    async scardCalls() {
      const info = await redis.info('commandstats')
      return Number(/^cmdstat_scard:calls=(\d+)/m.exec(info)?.[1] ?? 0)
    },
    async close() {
      redis.disconnect()
      await server.destroy()
      await schema.drop()
    },
  }
}
