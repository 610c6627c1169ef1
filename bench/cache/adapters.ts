// Read-through adapters: floodgate and its peers (installed in bench/peers,
// outside the workspace, see NOTES.md), each called through its normal
// read-through API, plus the older design (a Redis lock polled every 50 ms).
// Each counts the Redis commands its clients send (client-side, a wrapper of ~50 ns per
// command), so a table can show which library skips reads (cache-manager's `wrap` coalesces
// concurrent calls of one key, hits included).
import { createRequire } from 'node:module'
import { setTimeout as sleep } from 'node:timers/promises'
import { pathToFileURL } from 'node:url'
import { createCache, createRedisClient, NOT_FOUND, type NotFound } from 'floodgate'
import { Redis } from 'ioredis'

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** One cache under test. `load` returns null for "missing". */
export interface ReadThrough {
  name: string
  get(key: string, load: () => Promise<unknown>): Promise<unknown>
  /** Redis commands this adapter's clients have sent so far. */
  commands(): number
  close(): Promise<void>
}

export type AdapterKind =
  | 'floodgate'
  | 'floodgate-l2'
  | 'floodgate-l2-autopipelining'
  | 'bentocache'
  | 'bentocache-l2'
  | 'cache-manager'
  | 'cache-manager-l2'
  | 'polling-lock'
  | 'ioredis-get'
  | 'ioredis-get-autopipelining'

/**
 * Whether the adapter's Redis client writes every command queued in one tick in one socket
 * write (ioredis' `enableAutoPipelining`; node-redis, under @keyv/redis, always does): under
 * concurrency that halves round trips and CPU per command, so ratios pair adapters alike.
 */
export function batchesWrites(kind: AdapterKind): boolean {
  return kind.endsWith('-autopipelining') || kind.startsWith('cache-manager')
}

/** Counts the commands an ioredis client (either copy of ioredis) sends, pipelined or not. */
function countCommands(client: { sendCommand(...args: never[]): unknown }): () => number {
  let sent = 0
  const send = client.sendCommand.bind(client)
  client.sendCommand = (...args: never[]) => {
    sent++
    return send(...args)
  }
  return () => sent
}

const peers = createRequire(new URL('../peers/package.json', import.meta.url))
// biome-ignore lint/suspicious/noExplicitAny: peer libraries are untyped here (kept outside the workspace)
async function peer(name: string): Promise<any> {
  return import(pathToFileURL(peers.resolve(name)).href)
}

export async function makeAdapter(
  kind: AdapterKind,
  prefix: string,
  options: { bloom?: { mightContain(items: readonly string[]): Promise<boolean[]> } } = {},
): Promise<ReadThrough> {
  switch (kind) {
    case 'floodgate':
    case 'floodgate-l2':
    case 'floodgate-l2-autopipelining': {
      // floodgate's defaults: the 2 s command cap and the loop-aware 50 ms deadline
      const redis = createRedisClient(REDIS_URL, {
        redis: { enableAutoPipelining: kind === 'floodgate-l2-autopipelining' },
      })
      const cache = createCache<unknown>({
        redis,
        name: 'bench',
        prefix,
        l1: kind === 'floodgate' ? { maxEntries: 20_000 } : false,
        // A miss is `null` or `undefined` from the adapters' loaders.
        bloom: options.bloom,
      })
      await cache.ready
      return {
        name: kind,
        get: (key, load) =>
          cache.getOrLoad(key, async (): Promise<unknown | NotFound> => (await load()) ?? NOT_FOUND),
        commands: countCommands(redis),
        async close() {
          cache.close()
          redis.disconnect()
        },
      }
    }
    case 'bentocache':
    case 'bentocache-l2': {
      const { BentoCache, bentostore } = await peer('bentocache')
      const { memoryDriver } = await peer('bentocache/drivers/memory')
      const { redisDriver } = await peer('bentocache/drivers/redis')
      const { Redis: Redis5 } = await peer('ioredis')
      const connection = new Redis5(REDIS_URL)
      const commands = countCommands(connection)
      let store = bentostore()
      if (kind === 'bentocache')
        store = store.useL1Layer(memoryDriver({ maxItems: 20_000, maxSize: 64 * 1024 * 1024 }))
      store = store.useL2Layer(redisDriver({ connection }))
      const bento = new BentoCache({ default: 'c', prefix, stores: { c: store } })
      return {
        name: kind,
        get: (key, load) => bento.getOrSet({ key, ttl: '10m', factory: load }),
        commands,
        async close() {
          await bento.disconnectAll().catch(() => {})
          connection.disconnect()
        },
      }
    }
    case 'cache-manager':
    case 'cache-manager-l2': {
      const { createCache: createManager } = await peer('cache-manager')
      const { Keyv } = await peer('keyv')
      const { default: KeyvRedis } = await peer('@keyv/redis')
      const { CacheableMemory } = await peer('cacheable')
      const keyvRedis = new KeyvRedis(REDIS_URL)
      // @keyv/redis sends one command per store call; counted there (node-redis has no hook)
      let sent = 0
      for (const method of ['get', 'set', 'delete', 'has'] as const) {
        const call = keyvRedis[method].bind(keyvRedis)
        keyvRedis[method] = (...args: unknown[]) => {
          sent++
          return call(...args)
        }
      }
      const redisStore = new Keyv({ store: keyvRedis, namespace: prefix })
      const stores =
        kind === 'cache-manager'
          ? [new Keyv({ store: new CacheableMemory({ ttl: 600_000, lruSize: 20_000 }) }), redisStore]
          : [redisStore]
      const manager = createManager({ stores })
      return {
        name: kind,
        get: (key, load) => manager.wrap(key, load, 600_000),
        commands: () => sent,
        async close() {
          await manager.disconnect().catch(() => {})
        },
      }
    }
    case 'ioredis-get':
    case 'ioredis-get-autopipelining': {
      // The floor of an L2 hit: a raw ioredis GET + JSON.parse per call (SET on a miss), no
      // envelope, lock, deadline or breaker; ioredis' default options, auto-pipelining aside.
      const redis = new Redis(REDIS_URL, { enableAutoPipelining: kind === 'ioredis-get-autopipelining' })
      return {
        name: kind,
        commands: countCommands(redis),
        async get(key, load) {
          const valueKey = `${prefix}:raw:${key}`
          const raw = await redis.get(valueKey)
          if (raw !== null) return JSON.parse(raw)
          const value = await load()
          if (value !== undefined) await redis.set(valueKey, JSON.stringify(value), 'PX', 600_000)
          return value
        },
        async close() {
          redis.disconnect()
        },
      }
    }
    case 'polling-lock': {
      // The older design: GET; on a miss SET lock NX PX; the winner loads and SETs;
      // everyone else polls GET every 50 ms. No singleflight, no negative caching.
      const redis = new Redis(REDIS_URL)
      return {
        name: kind,
        commands: countCommands(redis),
        async get(key, load) {
          const valueKey = `${prefix}:poll:${key}`
          const deadline = Date.now() + 5000
          for (;;) {
            const raw = await redis.get(valueKey)
            if (raw !== null) return JSON.parse(raw)
            if (await redis.set(`${valueKey}:lock`, '1', 'PX', 5000, 'NX')) {
              const value = await load()
              if (value !== undefined) await redis.set(valueKey, JSON.stringify(value), 'PX', 600_000)
              await redis.del(`${valueKey}:lock`)
              return value
            }
            if (Date.now() > deadline) return load()
            await sleep(50)
          }
        },
        async close() {
          redis.disconnect()
        },
      }
    }
  }
}
