import { GUARD_DEFAULTS } from 'floodgate'
import type { FieldSpec } from './spec.js'

/** PostgreSQL (or embedded PGlite), its pool and the read-path guard in front of it, and the data folder. */
export const databaseFields = {
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
  dbPoolMin: {
    env: 'DB_POOL_MIN',
    toml: 'db_pool_min',
    default: undefined,
    type: { kind: 'int', min: 0, max: 1000 },
    doc: 'Connections the pg pool keeps open however long they idle, once opened (capped at DB_POOL_MAX); those above it close after 10 s idle. A burst after a lull then finds them open instead of waiting for a connection setup each. Unset = DB_POOL_MAX: no connection closes for idling.',
  },
  dbGuardMaxConcurrent: {
    env: 'DB_GUARD_MAX_CONCURRENT',
    toml: 'db_guard_max_concurrent',
    default: undefined,
    type: { kind: 'int', min: 1, max: 1000 },
    doc: 'Read-path PostgreSQL work running at once per instance (cache loads, uncached reads, count fallbacks); more waits in the guard queue. Writes are not guarded. Unset = DB_POOL_MAX.',
  },
  dbGuardMaxQueue: {
    env: 'DB_GUARD_MAX_QUEUE',
    toml: 'db_guard_max_queue',
    default: undefined,
    type: { kind: 'int', min: 0, max: 100_000 },
    doc: `Read-path database calls waiting for a guard slot per instance; one more is shed (503 OVERLOADED with Retry-After, floodgate_guard_shed_total on /metrics). Unset = ${GUARD_DEFAULTS.queuePerSlot} × DB_GUARD_MAX_CONCURRENT.`,
  },
  dbGuardQueueTimeoutMs: {
    env: 'DB_GUARD_QUEUE_TIMEOUT_MS',
    toml: 'db_guard_queue_timeout_ms',
    default: String(GUARD_DEFAULTS.maxQueueWaitMs),
    type: { kind: 'int', min: 1, max: 60_000 },
    doc: 'Longest wait for a guard slot (ms); past it the call is shed (503, Retry-After: this in whole seconds, rounded up).',
  },
  dataDir: {
    env: 'DATA_DIR',
    toml: 'data_dir',
    default: undefined,
    filledAtLoad: true,
    type: { kind: 'string' },
    doc: 'Data folder (PGlite, local Redis, JWT secret); default <repo>/data.',
  },
} as const satisfies Record<string, FieldSpec>

/** The demo catalog seeded into an empty database. */
export const seedFields = {
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
