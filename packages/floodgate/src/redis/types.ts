import type { Cluster, Redis } from 'ioredis'

/** A single-node client or a cluster client; every floodgate primitive accepts either. */
export type RedisClient = Redis | Cluster
