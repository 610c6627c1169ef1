import { TEST_DATABASE_URL } from '@floodgate/test-support'
import { testDbKind } from './database.js'
import { testRedisEnv } from './redis.js'

/** Where a test's service process keeps its state (each test has its own). */
export interface ServiceEnvOptions {
  port: number
  redisPrefix: string
  dataDir: string
  /** PostgreSQL schema (used when the suite runs on the server, not PGlite). */
  schema: string
  /** Demo catalog seeded on first start. @default 120 videos by 10 users */
  seedVideos?: number
}

/**
 * The environment of a real video-api process under test: this process's, minus what would leak
 * into it (JWT_SECRET, CONFIG_FILE, DATABASE_URL on PGlite), plus the test's port, Redis, key prefix,
 * data folder and database (the server and `schema`, or PGlite in `dataDir`).
 */
export function serviceEnv(options: ServiceEnvOptions, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...extra,
    PORT: String(options.port),
    HOST: '127.0.0.1',
    ...testRedisEnv(),
    REDIS_PREFIX: options.redisPrefix,
    DATA_DIR: options.dataDir,
    SEED_USERS: '10',
    SEED_VIDEOS: String(options.seedVideos ?? 120),
    LOG_LEVEL: 'warn',
  }
  delete env.JWT_SECRET
  delete env.CONFIG_FILE
  if (testDbKind === 'pg') {
    env.DATABASE_URL = TEST_DATABASE_URL
    env.DB_SCHEMA = options.schema
  } else delete env.DATABASE_URL
  return env
}
