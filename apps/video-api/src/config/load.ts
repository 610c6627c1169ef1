import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse as parseToml } from 'smol-toml'
import { checkRateLimitConfig } from '../rate_limit/from_config.js'
import { ConfigError } from './config_error.js'
import { type FieldKind, type FieldName, type FieldSpec, fields } from './fields.js'

/** The validated configuration. Units are in the names. */
export interface Config {
  port: number
  host: string
  databaseUrl: string | undefined
  dbSchema: string | undefined
  dbPoolMax: number
  /** Unset = `dbPoolMax` (see src/db/guard.ts). */
  dbGuardMaxConcurrent: number | undefined
  /** Unset = floodgate's default (4 × max concurrent). */
  dbGuardMaxQueue: number | undefined
  dbGuardQueueTimeoutMs: number
  /** Absolute path. */
  dataDir: string
  redisUrl: string | undefined
  /** Comma-separated `host:port` seeds of a Redis Cluster (validated); see `redisClusterSeeds()`. */
  redisClusterNodes: string | undefined
  redisPrefix: string
  redisCommandTimeoutMs: number
  redisMaxWaitMs: number
  cacheEnabled: boolean
  /** `floodgate` (default), `none` or `legacy` (see src/cache/external_reader.ts). */
  cacheMode: 'floodgate' | 'none' | 'legacy'
  cacheTtlMinMs: number
  cacheTtlMaxMs: number
  cacheNegativeTtlMs: number
  cacheStaleWhileRevalidateMs: number
  cacheLockTtlMs: number
  cacheLockWaitMs: number
  cacheL1TtlMs: number
  cacheL1MaxEntries: number
  cacheL1MaxBytes: number
  countsMaxAgeMs: number
  countsMaxStaleMs: number
  countsLocalMaxEntries: number
  countsLocalMaxBytes: number
  countsTracking: boolean
  feedCacheTtlMs: number
  bloomBits: number
  bloomHashes: number
  bloomRebuildRetryBaseMs: number
  bloomRebuildRetryMaxMs: number
  jwtSecret: string | undefined
  jwtTtlS: number
  logLevel: string
  bodyLimitBytes: number
  requestTimeoutMs: number
  connectionTimeoutMs: number
  keepAliveTimeoutMs: number
  shutdownTimeoutMs: number
  seedOnEmpty: boolean
  seedUsers: number
  seedVideos: number
  /** Comma-separated user ids (validated); see `adminIds()`. */
  adminUserIds: string
  interactionPartitions: number
  interactionTopK: number
  playDedupeWindowMs: number
  /** Replicas that must confirm each interaction write (0 = off). */
  interactionWaitReplicas: number
  interactionWaitTimeoutMs: number
  flushBatchSize: number
  flushClaimIdleMs: number
  flushMaxDeliveries: number
  /** `false`, `true`, a hop count, or proxy addresses/CIDRs (see src/rate_limit/from_config.ts). */
  trustProxy: string
  rateLimitEnabled: boolean
  rateLimitUserLimit: number
  rateLimitUserWindowMs: number
  rateLimitAnonymousLimit: number
  rateLimitAnonymousWindowMs: number
  rateLimitWriteLimit: number
  rateLimitWriteWindowMs: number
  rateLimitAuthLimit: number
  rateLimitAuthWindowMs: number
  rateLimitRoutes: string
  rateLimitFallback: 'insurance' | 'failOpen' | 'failClosed'
  rateLimitInsurancePercent: number
  rateLimitTimeoutMs: number
}

/** The repository root (`apps/video-api/src/config` → four levels up); the default data folder is `<root>/data`. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')

export interface LoadOptions {
  env?: NodeJS.ProcessEnv
  /** Command-line arguments; `--config <file>` names a TOML file (as does env `CONFIG_FILE`). */
  argv?: readonly string[]
}

/**
 * Reads the configuration: environment variables win over the TOML file
 * (`CONFIG_FILE` or `--config`), which wins over the defaults.
 * @throws {ConfigError} naming the first invalid field, e.g. `PORT: must be an integer 0-65535, got "abc"`.
 */
export function loadConfig(options: LoadOptions = {}): Config {
  const env = options.env ?? process.env
  const file = configFileFrom(env, options.argv ?? [])
  const toml = file === undefined ? {} : readToml(file)
  const raw = (name: FieldName): unknown => {
    const spec: FieldSpec = fields[name]
    const fromEnv = env[spec.env]
    if (fromEnv !== undefined && fromEnv !== '') return fromEnv
    if (spec.toml in toml) return toml[spec.toml]
    return spec.default
  }
  for (const key of Object.keys(toml)) {
    if (!Object.values(fields).some((f) => f.toml === key)) {
      throw new ConfigError(`${file}: ${key}`, 'unknown option')
    }
  }
  const out: Record<string, unknown> = {}
  for (const name of Object.keys(fields) as FieldName[]) {
    const spec: FieldSpec = fields[name]
    const value = raw(name)
    out[name] = value === undefined ? undefined : coerce(spec.env, spec.type, value)
  }
  const config = out as unknown as Config
  // Default: <repo>/data whatever the cwd. A relative DATA_DIR is taken against the directory the
  // user ran the command in (INIT_CWD under npm, which runs workspace scripts in apps/video-api).
  const dataDir = out.dataDir as string | undefined
  config.dataDir =
    dataDir === undefined ? resolve(repoRoot, 'data') : resolve(env.INIT_CWD ?? process.cwd(), dataDir)
  if (config.jwtSecret !== undefined && config.jwtSecret.length < 32) {
    throw new ConfigError('JWT_SECRET', `must be at least 32 characters, got ${config.jwtSecret.length}`)
  }
  if (config.dbSchema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(config.dbSchema)) {
    throw new ConfigError(
      'DB_SCHEMA',
      `must match [a-z_][a-z0-9_]{0,62}, got ${JSON.stringify(config.dbSchema)}`,
    )
  }
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(config.redisPrefix)) {
    throw new ConfigError(
      'REDIS_PREFIX',
      `must be 1-64 of [A-Za-z0-9_.-], got ${JSON.stringify(config.redisPrefix)}`,
    )
  }
  checkRedisTarget(config)
  checkRateLimitConfig(config)
  if (config.cacheTtlMaxMs < config.cacheTtlMinMs) {
    throw new ConfigError(
      'CACHE_TTL_MAX_MS',
      `must be at least CACHE_TTL_MIN_MS (${config.cacheTtlMinMs}), got ${config.cacheTtlMaxMs}`,
    )
  }
  if (config.bloomRebuildRetryMaxMs < config.bloomRebuildRetryBaseMs) {
    throw new ConfigError(
      'BLOOM_REBUILD_RETRY_MAX_MS',
      `must be at least BLOOM_REBUILD_RETRY_BASE_MS (${config.bloomRebuildRetryBaseMs}), got ${config.bloomRebuildRetryMaxMs}`,
    )
  }
  if (config.countsMaxStaleMs < config.countsMaxAgeMs) {
    throw new ConfigError(
      'COUNTS_MAX_STALE_MS',
      `must be at least COUNTS_MAX_AGE_MS (${config.countsMaxAgeMs}), got ${config.countsMaxStaleMs}`,
    )
  }
  if (config.redisMaxWaitMs < config.redisCommandTimeoutMs) {
    throw new ConfigError(
      'REDIS_MAX_WAIT_MS',
      `must be at least REDIS_COMMAND_TIMEOUT_MS (${config.redisCommandTimeoutMs}), got ${config.redisMaxWaitMs}`,
    )
  }
  // WAIT runs on a connection with the client's command timeout: a WAIT as long as that timeout fails
  // as "Redis unavailable" instead of "too few replicas", and holds the connection past it.
  if (config.interactionWaitReplicas > 0 && config.interactionWaitTimeoutMs >= config.redisMaxWaitMs) {
    throw new ConfigError(
      'INTERACTION_WAIT_TIMEOUT_MS',
      `must be below REDIS_MAX_WAIT_MS (${config.redisMaxWaitMs}) when INTERACTION_WAIT_REPLICAS is set, got ${config.interactionWaitTimeoutMs}`,
    )
  }
  if (!/^([1-9][0-9]{0,18})?(,[1-9][0-9]{0,18})*$/.test(config.adminUserIds.replaceAll(' ', ''))) {
    throw new ConfigError(
      'ADMIN_USER_IDS',
      `must be comma-separated user ids, got ${JSON.stringify(config.adminUserIds)}`,
    )
  }
  return config
}

/** REDIS_CLUSTER_NODES as a list of `host:port` seeds; `undefined` when unset (single node). */
export function redisClusterSeeds(config: { redisClusterNodes?: string | undefined }): string[] | undefined {
  if (config.redisClusterNodes === undefined) return undefined
  return config.redisClusterNodes
    .split(',')
    .map((seed) => seed.trim())
    .filter((seed) => seed.length > 0)
}

/** REDIS_CLUSTER_NODES must be a host:port list, and excludes REDIS_URL (one Redis target). */
function checkRedisTarget(config: Config): void {
  const seeds = redisClusterSeeds(config)
  if (seeds === undefined) return
  if (config.redisUrl !== undefined) {
    throw new ConfigError(
      'REDIS_CLUSTER_NODES',
      'cannot be set together with REDIS_URL (cluster mode takes its nodes from REDIS_CLUSTER_NODES); unset one of them',
    )
  }
  const bad = seeds.find(
    (seed) => !/^[A-Za-z0-9_.-]+:\d{1,5}$/.test(seed) || Number(seed.split(':')[1]) > 65535,
  )
  if (seeds.length === 0 || bad !== undefined) {
    throw new ConfigError(
      'REDIS_CLUSTER_NODES',
      `must be comma-separated host:port seeds, got ${JSON.stringify(config.redisClusterNodes)}`,
    )
  }
}

/** ADMIN_USER_IDS as a list of ids. */
export function adminIds(config: Pick<Config, 'adminUserIds'>): string[] {
  return config.adminUserIds
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id.length > 0)
}

function configFileFrom(env: NodeJS.ProcessEnv, argv: readonly string[]): string | undefined {
  const at = argv.indexOf('--config')
  if (at >= 0) {
    const file = argv[at + 1]
    if (file === undefined) throw new ConfigError('--config', 'needs a file path')
    return resolve(file)
  }
  return env.CONFIG_FILE ? resolve(env.CONFIG_FILE) : undefined
}

function readToml(file: string): Record<string, unknown> {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new ConfigError('CONFIG_FILE', `cannot read ${file}: ${(error as Error).message}`, { cause: error })
  }
  try {
    return parseToml(text) as Record<string, unknown>
  } catch (error) {
    throw new ConfigError('CONFIG_FILE', `${file} is not valid TOML: ${(error as Error).message}`, {
      cause: error,
    })
  }
}

function coerce(field: string, type: FieldKind, value: unknown): unknown {
  const shown = JSON.stringify(value)
  switch (type.kind) {
    case 'int': {
      const n =
        typeof value === 'number'
          ? value
          : typeof value === 'string' && /^-?\d+$/.test(value)
            ? Number(value)
            : Number.NaN
      if (!Number.isSafeInteger(n) || n < type.min || n > type.max) {
        throw new ConfigError(field, `must be an integer ${type.min}-${type.max}, got ${shown}`)
      }
      return n
    }
    case 'bool': {
      if (typeof value === 'boolean') return value
      if (value === 'true' || value === '1') return true
      if (value === 'false' || value === '0') return false
      throw new ConfigError(field, `must be true or false, got ${shown}`)
    }
    case 'enum': {
      if (typeof value === 'string' && type.values.includes(value)) return value
      throw new ConfigError(field, `must be one of ${type.values.join(', ')}, got ${shown}`)
    }
    case 'url': {
      if (typeof value !== 'string') throw new ConfigError(field, `must be a URL string, got ${shown}`)
      let url: URL
      try {
        url = new URL(value)
      } catch {
        throw new ConfigError(field, `must be a URL (${type.protocols.join(' or ')}//...), got ${shown}`)
      }
      if (!type.protocols.includes(url.protocol)) {
        throw new ConfigError(
          field,
          `must use ${type.protocols.join(' or ')}, got ${JSON.stringify(url.protocol)}`,
        )
      }
      return value
    }
    case 'string': {
      if (typeof value !== 'string') throw new ConfigError(field, `must be a string, got ${shown}`)
      if (value.length === 0 && !type.allowEmpty) throw new ConfigError(field, 'must not be empty')
      return value
    }
  }
}
