import type { Cluster, Redis } from 'ioredis'

/** A single-node client or a cluster client; every floodgate primitive accepts either. */
export type RedisClient = Redis | Cluster

/**
 * True when `client` is a cluster client. Reads ioredis' `isCluster` flag rather than
 * `instanceof Cluster`, which is false for a Cluster made by another copy of ioredis (a peer
 * dependency: the application's copy may not be the one floodgate imports).
 */
export function isCluster(client: RedisClient): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true
}
