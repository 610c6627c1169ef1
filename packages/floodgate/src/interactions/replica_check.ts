import { askNode, dataNodes } from '../redis/node_probe.js'
import type { RedisClient } from '../redis/types.js'

/** What {@link checkReplicas} found. */
export interface ReplicaReport {
  /** Each master checked (`host:port`) with its replicas whose link is online (`INFO replication`). */
  masters: Array<{ node: string; replicas: number }>
  /**
   * True when every master has at least the wanted replicas online; false when some has fewer
   * (with `waitForReplicas` its writes then all fail with `ReplicationTimeoutError`); undefined when
   * it could not be read (see `error`).
   */
  enough: boolean | undefined
  /** Why it could not be read (e.g. `NOPERM …`, a timeout); set only when `enough` is undefined. */
  error?: string
}

/**
 * Counts the online replicas of the node, or of every master of a cluster, from `INFO replication`
 * (`slaveN:…,state=online,…` lines), so a service using `waitForReplicas: { replicas: wanted }` can
 * warn at start when WAIT cannot be satisfied. Each node is asked over its own short-lived
 * connection with a `timeoutMs` (ms, default 2000) timeout. Never throws.
 */
export async function checkReplicas(
  redis: RedisClient,
  wanted: number,
  options: { timeoutMs?: number } = {},
): Promise<ReplicaReport> {
  const timeoutMs = options.timeoutMs ?? 2000
  try {
    const nodes = await dataNodes(redis, timeoutMs)
    if (nodes.length === 0) return { masters: [], enough: undefined, error: 'no cluster master known' }
    const masters = await Promise.all(
      nodes.map(async (node) => ({
        node: `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`,
        replicas: onlineReplicas(String(await askNode(node, timeoutMs, 'INFO', 'replication'))),
      })),
    )
    return { masters, enough: masters.every((m) => m.replicas >= wanted) }
  } catch (error) {
    return { masters: [], enough: undefined, error: String((error as Error)?.message ?? error) }
  }
}

/** Replicas listed as `state=online` in an `INFO replication` section. */
export function onlineReplicas(info: string): number {
  return info.split(/\r?\n/).filter((line) => /^slave\d+:.*\bstate=online\b/.test(line)).length
}
