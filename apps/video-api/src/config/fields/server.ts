import type { FieldSpec } from './spec.js'

/** Where the service listens. */
export const listenFields = {
  port: {
    env: 'PORT',
    toml: 'port',
    default: '3000',
    type: { kind: 'int', min: 0, max: 65535 },
    doc: 'TCP port (0 = any free port).',
  },
  host: { env: 'HOST', toml: 'host', default: '127.0.0.1', type: { kind: 'string' }, doc: 'Listen address.' },
} as const satisfies Record<string, FieldSpec>

/** The HTTP server: bearer tokens, logging, body and timeouts, shutdown. */
export const httpFields = {
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
  authKnownUserTtlMs: {
    env: 'AUTH_KNOWN_USER_TTL_MS',
    toml: 'auth_known_user_ttl_ms',
    default: '60000',
    type: { kind: 'int', min: 1, max: 86_400_000 },
    doc: "How long (ms) an instance trusts that a token's user exists once PostgreSQL said so, before a write asks again (a user deleted by hand can write this long). While PostgreSQL cannot be reached, writes go on with the signed token alone (docs/operations.md).",
  },
  logLevel: {
    env: 'LOG_LEVEL',
    toml: 'log_level',
    default: 'info',
    type: { kind: 'enum', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] },
    doc: 'pino log level.',
  },
  logFlushMs: {
    env: 'LOG_FLUSH_MS',
    toml: 'log_flush_ms',
    default: '100',
    type: { kind: 'int', min: 0, max: 10_000 },
    doc: 'Longest time a log line waits in the 16 KiB stdout buffer (ms; flushed at exit, lost only on SIGKILL or a crash of Node itself); 0 writes each line at once.',
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
} as const satisfies Record<string, FieldSpec>
