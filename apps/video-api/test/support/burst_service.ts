import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { TEST_DATABASE_URL } from '@floodgate/test-support'
import { BloomFilter } from 'floodgate'
import type { Cluster, Redis } from 'ioredis'
import pg from 'pg'
import { fields } from '../../src/config/fields.js'
import { dropSchema, uniqueSchema } from './database.js'
import { deleteByPrefix, testRedisEnv } from './redis.js'
import { killServices, type ServiceProcess, type StartOptions, startServices } from './service_processes.js'

/** The catalog of the issue "Flood-proof with the defaults" (the default seed is 3,000 videos). */
export const BURST_SEED_VIDEOS = 20_000

/** Service instances on one database and one Redis, started for a burst test file. */
export interface BurstService {
  services: ServiceProcess[]
  bases: string[]
  schema: string
  /** REDIS_PREFIX of the instances. */
  prefix: string
  /** application_name of the instances' PostgreSQL connections (pg_stat_activity). */
  appName: string
  /** The video-id Bloom filter as the instances build it (default size), on `redis`. */
  bloom: BloomFilter
  /** Ids of live, published, public videos (a GET answers 200), ascending. */
  publicIds(limit: number): Promise<string[]>
  /** One more than the largest video id: every id from here on is absent. */
  absentFrom(): Promise<number>
  /** Kills the instances, deletes the prefix's keys, drops the schema, removes the data folder. */
  close(): Promise<void>
}

/**
 * Starts `count` main.ts instances with the default configuration on a fresh schema, seeded
 * with {@link BURST_SEED_VIDEOS} videos by the first instance (the others wait on the seed's
 * advisory lock), and waits until they answer and the Bloom filter is built (a burst before that
 * would only measure the start). `redis` is the tests' client of the same Redis; `redisEnv` the
 * instances' REDIS_URL or REDIS_CLUSTER_NODES (default: the test Redis); `options` per instance
 * and during the start (see {@link startServices}).
 */
export async function startBurstService(
  label: string,
  count: number,
  redis: Redis | Cluster,
  redisEnv: Record<string, string> = testRedisEnv() as Record<string, string>,
  options: StartOptions = {},
): Promise<BurstService> {
  const schema = uniqueSchema(label)
  const prefix = `vatest-${label}-${process.pid}-${Date.now().toString(36)}`
  const dataDir = mkdtempSync(join(tmpdir(), `va-${label}-`))
  const appName = `va-burst-${label}-${process.pid}`
  const bloom = new BloomFilter({
    redis,
    prefix,
    name: 'videos',
    bits: Number(fields.bloomBits.default),
    hashes: Number(fields.bloomHashes.default),
  })
  const pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 1 })
  let services: ServiceProcess[] = []
  const close = async () => {
    await killServices(services)
    await pool.end()
    try {
      await deleteByPrefix(redis, `${prefix}:`) // fails on a Redis a test killed: the rest still runs
    } finally {
      await dropSchema(schema)
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  try {
    services = await startServices(
      count,
      {
        // isolation on the shared server: a schema of this file, dropped afterwards
        DATABASE_URL: TEST_DATABASE_URL,
        DB_SCHEMA: schema,
        // the test Redis (or the file's private server) instead of a local redis-server
        ...redisEnv,
        // isolation on a shared Redis: keys of this file only, deleted afterwards
        REDIS_PREFIX: prefix,
        // the JWT secret file every instance reads (a token is valid on each), not the repo's data/
        DATA_DIR: dataDir,
        // the catalog size
        SEED_VIDEOS: String(BURST_SEED_VIDEOS),
        // small test output (warnings and errors still show)
        LOG_LEVEL: 'warn',
        // not a service setting: node-postgres's application_name, to tell these backends apart
        PGAPPNAME: appName,
      },
      undefined,
      options,
    )
    await waitBloomReady(bloom, redis, services)
  } catch (error) {
    await close()
    throw error
  }
  return {
    services,
    bases: services.map((s) => s.base),
    schema,
    prefix,
    appName,
    bloom,
    async publicIds(limit) {
      const { rows } = await pool.query<{ id: string }>(
        `SELECT id::text AS id FROM "${schema}".videos
          WHERE status = 'published' AND visibility = 'public' AND deleted_at IS NULL ORDER BY id LIMIT $1`,
        [limit],
      )
      return rows.map((r) => r.id)
    },
    async absentFrom() {
      const { rows } = await pool.query<{ next: string }>(
        `SELECT (coalesce(max(id), 0) + 1)::text AS next FROM "${schema}".videos`,
      )
      return Number(rows[0]!.next)
    },
    close,
  }
}

async function waitBloomReady(
  bloom: BloomFilter,
  redis: Redis | Cluster,
  services: readonly ServiceProcess[],
): Promise<void> {
  const meta = bloom.keys(0).meta
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(200)) {
    if ((await redis.hget(meta, 'ready')) !== null) return
  }
  throw new Error(`Bloom filter not built within 60 s: ${services.map((s) => s.output()).join('\n')}`)
}
