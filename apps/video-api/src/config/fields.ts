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
  redisClusterNodes: {
    env: 'REDIS_CLUSTER_NODES',
    toml: 'redis_cluster_nodes',
    default: undefined,
    type: { kind: 'string' },
    doc: 'Redis Cluster seeds, comma-separated host:port (e.g. 10.0.0.1:7000,10.0.0.2:7000); set = cluster mode (ioredis Cluster), REDIS_URL must then be unset.',
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
  cacheEnabled: {
    env: 'CACHE_ENABLED',
    toml: 'cache_enabled',
    default: 'true',
    type: { kind: 'bool' },
    doc: 'Serve video reads and the feed through the floodgate cache.',
  },
  cacheMode: {
    env: 'CACHE_MODE',
    toml: 'cache_mode',
    default: 'floodgate',
    type: { kind: 'enum', values: ['floodgate', 'none', 'legacy'] },
    doc: 'Read cache design (benchmarks): floodgate; none (reads go to the database); legacy (a reader wrapper preloaded with --import, e.g. bench/scenarios/legacy/register.ts).',
  },
  cacheTtlMinMs: {
    env: 'CACHE_TTL_MIN_MS',
    toml: 'cache_ttl_min_ms',
    default: '300000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: 'Lower bound of the jittered Redis TTL of a cached video (ms).',
  },
  cacheTtlMaxMs: {
    env: 'CACHE_TTL_MAX_MS',
    toml: 'cache_ttl_max_ms',
    default: '600000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: 'Upper bound of the jittered Redis TTL of a cached video (ms); at least CACHE_TTL_MIN_MS.',
  },
  cacheNegativeTtlMs: {
    env: 'CACHE_NEGATIVE_TTL_MS',
    toml: 'cache_negative_ttl_ms',
    default: '60000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: 'TTL of a cached "no such video" (ms).',
  },
  cacheStaleWhileRevalidateMs: {
    env: 'CACHE_STALE_WHILE_REVALIDATE_MS',
    toml: 'cache_stale_while_revalidate_ms',
    default: '60000',
    type: { kind: 'int', min: 0, max: 86_400_000 },
    doc: 'Grace after expiry during which a stale video is served while one refresh runs (ms); 0 = off.',
  },
  cacheLockTtlMs: {
    env: 'CACHE_LOCK_TTL_MS',
    toml: 'cache_lock_ttl_ms',
    default: '5000',
    type: { kind: 'int', min: 100, max: 600_000 },
    doc: 'TTL of the per-key load lock (ms).',
  },
  cacheLockWaitMs: {
    env: 'CACHE_LOCK_WAIT_MS',
    toml: 'cache_lock_wait_ms',
    default: '2000',
    type: { kind: 'int', min: 10, max: 600_000 },
    doc: 'Longest wait for the load of another instance before loading without writing (ms).',
  },
  cacheL1TtlMs: {
    env: 'CACHE_L1_TTL_MS',
    toml: 'cache_l1_ttl_ms',
    default: '10000',
    type: { kind: 'int', min: 1, max: 3_600_000 },
    doc: 'TTL of the in-process L1 cache (ms).',
  },
  cacheL1MaxEntries: {
    env: 'CACHE_L1_MAX_ENTRIES',
    toml: 'cache_l1_max_entries',
    default: '200000',
    type: { kind: 'int', min: 1, max: 10_000_000 },
    doc: 'Capacity of the in-process L1 cache (entries); CACHE_L1_MAX_BYTES is the bound that usually applies first.',
  },
  cacheL1MaxBytes: {
    env: 'CACHE_L1_MAX_BYTES',
    toml: 'cache_l1_max_bytes',
    default: '67108864',
    type: { kind: 'int', min: 1024, max: 4_294_967_296 },
    doc: 'Capacity of the in-process L1 cache (bytes, each entry weighed by its encoded length; default 64 MiB).',
  },
  feedCacheTtlMs: {
    env: 'FEED_CACHE_TTL_MS',
    toml: 'feed_cache_ttl_ms',
    default: '300000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: 'Fixed TTL of the cached recommendation feed (ms); writes invalidate it sooner.',
  },
  bloomBits: {
    env: 'BLOOM_BITS',
    toml: 'bloom_bits',
    default: '10000000',
    type: { kind: 'int', min: 1024, max: 4_294_967_296 },
    doc: 'Size of the video-id Bloom filter (bits).',
  },
  bloomHashes: {
    env: 'BLOOM_HASHES',
    toml: 'bloom_hashes',
    default: '7',
    type: { kind: 'int', min: 1, max: 30 },
    doc: 'Hash functions of the video-id Bloom filter.',
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
  trustProxy: {
    env: 'TRUST_PROXY',
    toml: 'trust_proxy',
    default: 'false',
    type: { kind: 'string' },
    doc: 'Proxies whose X-Forwarded-For is trusted for the client IP: false, true, a hop count, or comma-separated IPs/CIDRs.',
  },
  rateLimitEnabled: {
    env: 'RATE_LIMIT_ENABLED',
    toml: 'rate_limit_enabled',
    default: 'true',
    type: { kind: 'bool' },
    doc: 'Rate-limit every route (see src/rate_limit/README.md).',
  },
  rateLimitUserLimit: {
    env: 'RATE_LIMIT_USER_LIMIT',
    toml: 'rate_limit_user_limit',
    default: '100',
    type: { kind: 'int', min: 1, max: 1_000_000 },
    doc: 'Requests per RATE_LIMIT_USER_WINDOW_MS per authenticated user (reads).',
  },
  rateLimitUserWindowMs: {
    env: 'RATE_LIMIT_USER_WINDOW_MS',
    toml: 'rate_limit_user_window_ms',
    default: '60000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: 'Window of the per-user quota (ms).',
  },
  rateLimitAnonymousLimit: {
    env: 'RATE_LIMIT_ANONYMOUS_LIMIT',
    toml: 'rate_limit_anonymous_limit',
    default: '300',
    type: { kind: 'int', min: 1, max: 1_000_000 },
    doc: 'Requests per RATE_LIMIT_ANONYMOUS_WINDOW_MS per client IP (IPv6 /64), anonymous reads.',
  },
  rateLimitAnonymousWindowMs: {
    env: 'RATE_LIMIT_ANONYMOUS_WINDOW_MS',
    toml: 'rate_limit_anonymous_window_ms',
    default: '60000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: 'Window of the per-IP anonymous quota (ms).',
  },
  rateLimitWriteLimit: {
    env: 'RATE_LIMIT_WRITE_LIMIT',
    toml: 'rate_limit_write_limit',
    default: '30',
    type: { kind: 'int', min: 1, max: 1_000_000 },
    doc: 'Writes (POST, PUT, PATCH, DELETE) per RATE_LIMIT_WRITE_WINDOW_MS per user, or per IP when anonymous.',
  },
  rateLimitWriteWindowMs: {
    env: 'RATE_LIMIT_WRITE_WINDOW_MS',
    toml: 'rate_limit_write_window_ms',
    default: '60000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: 'Window of the write quota (ms).',
  },
  rateLimitAuthLimit: {
    env: 'RATE_LIMIT_AUTH_LIMIT',
    toml: 'rate_limit_auth_limit',
    default: '10',
    type: { kind: 'int', min: 1, max: 1_000_000 },
    doc: 'POST /auth/login and /auth/register per RATE_LIMIT_AUTH_WINDOW_MS per client IP (brute force).',
  },
  rateLimitAuthWindowMs: {
    env: 'RATE_LIMIT_AUTH_WINDOW_MS',
    toml: 'rate_limit_auth_window_ms',
    default: '60000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: 'Window of the login/register quota (ms).',
  },
  rateLimitRoutes: {
    env: 'RATE_LIMIT_ROUTES',
    toml: 'rate_limit_routes',
    default: '',
    type: { kind: 'string', allowEmpty: true },
    doc: 'Per-route quotas: comma-separated "<METHOD> <route>=<limit>/<windowMs>", e.g. "POST /videos=20/60000".',
  },
  rateLimitFallback: {
    env: 'RATE_LIMIT_FALLBACK',
    toml: 'rate_limit_fallback',
    default: 'insurance',
    type: { kind: 'enum', values: ['insurance', 'failOpen', 'failClosed'] },
    doc: 'While Redis is unreachable: an in-memory limiter per instance (insurance), admit all, or reject all.',
  },
  rateLimitInsurancePercent: {
    env: 'RATE_LIMIT_INSURANCE_PERCENT',
    toml: 'rate_limit_insurance_percent',
    default: '100',
    type: { kind: 'int', min: 1, max: 100 },
    doc: 'Share of each quota one instance grants on its own during a Redis outage (%); 100 / instances keeps the total.',
  },
  rateLimitTimeoutMs: {
    env: 'RATE_LIMIT_TIMEOUT_MS',
    toml: 'rate_limit_timeout_ms',
    default: '50',
    type: { kind: 'int', min: 1, max: 10_000 },
    doc: 'Longest wait for a Redis rate-limit decision (ms) before the fallback answers.',
  },
  adminUserIds: {
    env: 'ADMIN_USER_IDS',
    toml: 'admin_user_ids',
    default: '',
    type: { kind: 'string', allowEmpty: true },
    doc: 'Comma-separated user ids allowed on the admin endpoints (counter rebuild, reconcile); empty = nobody.',
  },
  interactionPartitions: {
    env: 'INTERACTION_PARTITIONS',
    toml: 'interaction_partitions',
    default: '16',
    type: { kind: 'int', min: 1, max: 16384 },
    doc: 'Partitions of the interaction keys, streams and ranking shards (video id mod P); change only on drained streams, then rebuild.',
  },
  interactionTopK: {
    env: 'INTERACTION_TOP_K',
    toml: 'interaction_top_k',
    default: '1000',
    type: { kind: 'int', min: 1, max: 100_000 },
    doc: 'Videos kept per partition in the all-time ranking ZSETs.',
  },
  playDedupeWindowMs: {
    env: 'PLAY_DEDUPE_WINDOW_MS',
    toml: 'play_dedupe_window_ms',
    default: '600000',
    type: { kind: 'int', min: 1000, max: 86_400_000 },
    doc: "A viewer's plays of one video inside this window count once (ms).",
  },
  flushBatchSize: {
    env: 'FLUSH_BATCH_SIZE',
    toml: 'flush_batch_size',
    default: '1000',
    type: { kind: 'int', min: 1, max: 10_000 },
    doc: 'Interaction events applied to PostgreSQL per transaction by the flush consumer.',
  },
  flushClaimIdleMs: {
    env: 'FLUSH_CLAIM_IDLE_MS',
    toml: 'flush_claim_idle_ms',
    default: '30000',
    type: { kind: 'int', min: 1000, max: 3_600_000 },
    doc: "Idle time after which a dead instance's unacknowledged events are claimed (XAUTOCLAIM) (ms).",
  },
  flushMaxDeliveries: {
    env: 'FLUSH_MAX_DELIVERIES',
    toml: 'flush_max_deliveries',
    default: '5',
    type: { kind: 'int', min: 1, max: 1000 },
    doc: 'Deliveries of an event the database rejects as bad data before it goes to the dead-letter stream.',
  },
} as const satisfies Record<string, FieldSpec>

export type FieldName = keyof typeof fields
