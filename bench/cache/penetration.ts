import { BloomFilter, createRedisClient } from 'floodgate'
import { Redis } from 'ioredis'
import { type AdapterKind, makeAdapter, REDIS_URL } from './adapters.js'

async function countKeys(redis: Redis, match: string): Promise<number> {
  let cursor = '0'
  let n = 0
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 5000)
    cursor = next
    n += keys.length
  } while (cursor !== '0')
  return n
}

/**
 * Penetration: `requests` reads of ids drawn uniformly from `distinct` ids
 * that do not exist (the catalog holds ids 0..catalog-1, the attack asks
 * above that), 100 in flight. Counts DB calls and keys written under the prefix
 * (the Bloom filter's own keys excluded).
 */
export async function measurePenetration(
  kind: AdapterKind | 'floodgate+bloom',
  prefix: string,
  options: { requests: number; distinct: number; catalog: number },
) {
  const redis = new Redis(REDIS_URL)
  let bloom: BloomFilter | undefined
  let bloomClient: ReturnType<typeof createRedisClient> | undefined
  if (kind === 'floodgate+bloom') {
    bloomClient = createRedisClient(REDIS_URL, { commandTimeoutMs: 1000 })
    const client = bloomClient
    await new Promise((resolve) => client.once('ready', resolve))
    bloom = new BloomFilter({
      redis: bloomClient,
      prefix: `${prefix}-bloom`,
      name: 'videos',
      expectedItems: options.catalog,
      falsePositiveRate: 0.01,
    })
    const catalog = options.catalog
    await bloom.rebuild(
      (async function* () {
        for (let i = 0; i < catalog; i += 1000) {
          yield Array.from({ length: Math.min(1000, catalog - i) }, (_, j) => `v${i + j}`)
        }
      })(),
    )
  }
  const adapter = await makeAdapter(kind === 'floodgate+bloom' ? 'floodgate' : kind, prefix, { bloom })
  let dbCalls = 0
  // Missing rows are `null`: every library's way to cache a miss (bentocache refuses `undefined`).
  const load = async () => {
    dbCalls++
    return null
  }
  const ids = Array.from(
    { length: options.requests },
    () => `v${options.catalog + 1_000_000 + Math.floor(Math.random() * options.distinct)}`,
  )
  const started = performance.now()
  for (let i = 0; i < ids.length; i += 100) {
    await Promise.all(ids.slice(i, i + 100).map((id) => adapter.get(id, load)))
  }
  const elapsedMs = performance.now() - started
  await adapter.close()
  bloomClient?.disconnect()
  const keysWritten = await countKeys(redis, `*${prefix}:*`)
  redis.disconnect()
  return {
    kind,
    requests: options.requests,
    distinctIds: options.distinct,
    dbCalls,
    keysWritten,
    elapsedMs: Math.round(elapsedMs),
  }
}
