import type { Cluster } from 'ioredis'
import type { RedisClient } from '../redis/types.js'

/** What {@link checkEvictionPolicy} found. */
export interface EvictionPolicyReport {
  /** `maxmemory-policy` of each node checked (every master on a cluster). */
  policies: string[]
  /**
   * True when every node runs `noeviction`; false when some node may evict keys (then likes,
   * play counters, dedupe markers or stream entries can vanish); undefined when it could not be
   * read (CONFIG disabled, as on some managed services).
   */
  safe: boolean | undefined
}

/**
 * Reads `maxmemory-policy` (CONFIG GET) on the node, or on every master of a cluster.
 * Interaction state must never be evicted: the service should warn loudly unless `safe` is true.
 * Never throws; a failed read yields `safe: undefined`.
 */
export async function checkEvictionPolicy(redis: RedisClient): Promise<EvictionPolicyReport> {
  try {
    const nodes = redis.isCluster ? (redis as Cluster).nodes('master') : [redis]
    const policies = await Promise.all(
      nodes.map(async (node) => {
        const reply = (await node.call('CONFIG', 'GET', 'maxmemory-policy')) as unknown
        return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : 'unknown'
      }),
    )
    if (policies.length === 0 || policies.includes('unknown')) return { policies, safe: undefined }
    return { policies, safe: policies.every((p) => p === 'noeviction') }
  } catch {
    return { policies: [], safe: undefined }
  }
}
