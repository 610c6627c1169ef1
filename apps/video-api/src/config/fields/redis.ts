import { DEADLINE_DEFAULTS } from 'floodgate'
import type { FieldSpec } from './spec.js'

/** The Redis connection: where, the key prefix, and how long a command may take. */
export const redisFields = {
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
    default: String(DEADLINE_DEFAULTS.timeoutMs),
    type: { kind: 'int', min: 1, max: 60_000 },
    doc: 'Idle event-loop time (ms) a request-path Redis call (cache, counts, rate limit) gets before it counts as failed; time this process spent busy elsewhere does not count, so a burst does not make a healthy Redis look dead.',
  },
  redisMaxWaitMs: {
    env: 'REDIS_MAX_WAIT_MS',
    toml: 'redis_max_wait_ms',
    default: String(DEADLINE_DEFAULTS.maxWaitMs),
    type: { kind: 'int', min: 1, max: 60_000 },
    doc: 'Longest wall-clock wait (ms) of any Redis command however busy the process (the client command timeout); must not be below REDIS_COMMAND_TIMEOUT_MS.',
  },
} as const satisfies Record<string, FieldSpec>
