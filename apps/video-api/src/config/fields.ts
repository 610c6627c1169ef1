/**
 * Every configuration option of video-api: its environment variable, its
 * key in the optional TOML file, its default and its unit. Units are in the
 * names (`_MS`, `_S`, `_BYTES`).
 */
export type FieldKind =
  | { kind: 'int'; min: number; max: number }
  | { kind: 'string'; allowEmpty?: boolean }
  | { kind: 'bool' }
  | { kind: 'url'; protocols: readonly string[] }
  | { kind: 'enum'; values: readonly string[] }

export interface FieldSpec {
  /** Environment variable, also the error-message name of the field. */
  env: string
  /** Key in the TOML file (snake_case). */
  toml: string
  /** Default as it would appear in the environment; `undefined` = unset. */
  default: string | undefined
  type: FieldKind
  doc: string
}

export const fields = {
  port: {
    env: 'PORT',
    toml: 'port',
    default: '3000',
    type: { kind: 'int', min: 0, max: 65535 },
    doc: 'TCP port (0 = any free port).',
  },
  host: { env: 'HOST', toml: 'host', default: '127.0.0.1', type: { kind: 'string' }, doc: 'Listen address.' },
  databaseUrl: {
    env: 'DATABASE_URL',
    toml: 'database_url',
    default: undefined,
    type: { kind: 'url', protocols: ['postgres:', 'postgresql:'] },
    doc: 'PostgreSQL server URL; unset = embedded PGlite in DATA_DIR/pglite.',
  },
  dbSchema: {
    env: 'DB_SCHEMA',
    toml: 'db_schema',
    default: undefined,
    type: { kind: 'string' },
    doc: 'PostgreSQL schema to use (created if missing); unset = the server default (public).',
  },
  dbPoolMax: {
    env: 'DB_POOL_MAX',
    toml: 'db_pool_max',
    default: '10',
    type: { kind: 'int', min: 1, max: 1000 },
    doc: 'Maximum connections in the pg pool.',
  },
  dataDir: {
    env: 'DATA_DIR',
    toml: 'data_dir',
    default: undefined,
    type: { kind: 'string' },
    doc: 'Data folder (PGlite, local Redis, JWT secret); default <repo>/data.',
  },
  redisUrl: {
    env: 'REDIS_URL',
    toml: 'redis_url',
    default: undefined,
    type: { kind: 'url', protocols: ['redis:', 'rediss:'] },
    doc: 'Redis URL; unset = redis://127.0.0.1:6379, or a local redis-server started on demand.',
  },
  redisPrefix: {
    env: 'REDIS_PREFIX',
    toml: 'redis_prefix',
    default: 'va',
    type: { kind: 'string' },
    doc: 'Prefix of every Redis key of the service.',
  },
  redisCommandTimeoutMs: {
    env: 'REDIS_COMMAND_TIMEOUT_MS',
    toml: 'redis_command_timeout_ms',
    default: '50',
    type: { kind: 'int', min: 1, max: 60_000 },
    doc: 'Per-command Redis timeout (ms).',
  },
  jwtSecret: {
    env: 'JWT_SECRET',
    toml: 'jwt_secret',
    default: undefined,
    type: { kind: 'string' },
    doc: 'HS256 secret (≥ 32 chars); unset = random, kept in DATA_DIR/jwt-secret.',
  },
  jwtTtlS: {
    env: 'JWT_TTL_S',
    toml: 'jwt_ttl_s',
    default: '3600',
    type: { kind: 'int', min: 1, max: 31_536_000 },
    doc: 'Token lifetime (s).',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    toml: 'log_level',
    default: 'info',
    type: { kind: 'enum', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    doc: 'pino log level.',
  },
  bodyLimitBytes: {
    env: 'BODY_LIMIT_BYTES',
    toml: 'body_limit_bytes',
    default: '65536',
    type: { kind: 'int', min: 1024, max: 104_857_600 },
    doc: 'Maximum request body (bytes).',
  },
  requestTimeoutMs: {
    env: 'REQUEST_TIMEOUT_MS',
    toml: 'request_timeout_ms',
    default: '10000',
    type: { kind: 'int', min: 1, max: 600_000 },
    doc: 'Time to receive a whole request (ms).',
  },
  connectionTimeoutMs: {
    env: 'CONNECTION_TIMEOUT_MS',
    toml: 'connection_timeout_ms',
    default: '10000',
    type: { kind: 'int', min: 1, max: 600_000 },
    doc: 'Idle socket timeout (ms).',
  },
  keepAliveTimeoutMs: {
    env: 'KEEP_ALIVE_TIMEOUT_MS',
    toml: 'keep_alive_timeout_ms',
    default: '72000',
    type: { kind: 'int', min: 1, max: 600_000 },
    doc: 'Keep-alive idle timeout (ms).',
  },
  shutdownTimeoutMs: {
    env: 'SHUTDOWN_TIMEOUT_MS',
    toml: 'shutdown_timeout_ms',
    default: '10000',
    type: { kind: 'int', min: 1, max: 600_000 },
    doc: 'Drain time on SIGTERM before a forced exit (ms).',
  },
  seedOnEmpty: {
    env: 'SEED_ON_EMPTY',
    toml: 'seed_on_empty',
    default: 'true',
    type: { kind: 'bool' },
    doc: 'Seed the demo catalog when the database has no users.',
  },
  seedUsers: {
    env: 'SEED_USERS',
    toml: 'seed_users',
    default: '200',
    type: { kind: 'int', min: 1, max: 10_000_000 },
    doc: 'Users in the demo catalog.',
  },
  seedVideos: {
    env: 'SEED_VIDEOS',
    toml: 'seed_videos',
    default: '3000',
    type: { kind: 'int', min: 0, max: 100_000_000 },
    doc: 'Videos in the demo catalog.',
  },
} as const satisfies Record<string, FieldSpec>

export type FieldName = keyof typeof fields
