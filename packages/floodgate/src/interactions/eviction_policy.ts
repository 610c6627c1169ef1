import type { Redis } from 'ioredis'
import { askNode, dataNodes } from '../redis/node_probe.js'
import type { RedisClient } from '../redis/types.js'

/** What {@link checkEvictionPolicy} found. */
export interface EvictionPolicyReport {
  /** `maxmemory-policy` of each node checked (every master on a cluster). */
  policies: string[]
  /**
   * True when every node runs `noeviction`; false when some node may evict keys (then likes,
   * play counters, dedupe markers or stream entries can vanish); undefined when it could not be
   * read (see `error`).
   */
  safe: boolean | undefined
  /** Why the policy could not be read (e.g. `NOPERM …`, `unknown command 'CONFIG'`, a timeout); set only when `safe` is undefined. */
  error?: string
}

/** Options of {@link checkEvictionPolicy}. */
export interface EvictionPolicyCheckOptions {
  /** Longest wait (ms) for the connection and the CONFIG GET reply of each node. @default 2000 */
  timeoutMs?: number
}

/**
 * Reads `maxmemory-policy` (CONFIG GET) on the node, or on every master of a cluster.
 * Interaction state must never be evicted: the service should warn loudly unless `safe` is true.
 *
 * The read goes over a short-lived connection of its own (a duplicate of each node's client, with
 * the offline queue on and a `timeoutMs` command timeout), so it neither depends on `redis` being
 * connected yet (floodgate clients have no offline queue: a command sent before `ready` fails at
 * once) nor on its per-command timeout (50 ms by default, which a loaded Redis can exceed).
 * Never throws; a failed read yields `safe: undefined` and `error`.
 */
export async function checkEvictionPolicy(
  redis: RedisClient,
  options: EvictionPolicyCheckOptions = {},
): Promise<EvictionPolicyReport> {
  const timeoutMs = options.timeoutMs ?? 2000
  try {
    const nodes = await dataNodes(redis, timeoutMs)
    if (nodes.length === 0) return { policies: [], safe: undefined, error: 'no cluster master known' }
    const policies = await Promise.all(nodes.map((node) => readPolicy(node, timeoutMs)))
    if (policies.includes('unknown'))
      return { policies, safe: undefined, error: 'CONFIG GET maxmemory-policy returned no value' }
    return { policies, safe: policies.every((p) => p === 'noeviction') }
  } catch (error) {
    return { policies: [], safe: undefined, error: String((error as Error)?.message ?? error) }
  }
}

async function readPolicy(node: Redis, timeoutMs: number): Promise<string> {
  const reply = await askNode(node, timeoutMs, 'CONFIG', 'GET', 'maxmemory-policy')
  return Array.isArray(reply) && typeof reply[1] === 'string' ? reply[1] : 'unknown'
}
