import type { Redis } from 'ioredis'
import { isCluster, type RedisClient } from './types.js'

/**
 * The nodes that hold data: every master of a cluster client (waiting up to `timeoutMs` ms for the
 * client to learn the topology; none known then = an empty list), or the single node itself.
 */
export async function dataNodes(redis: RedisClient, timeoutMs: number): Promise<Redis[]> {
  if (!isCluster(redis)) return [redis as Redis]
  const cluster = redis
  if (cluster.nodes('master').length === 0 && cluster.status !== 'ready') {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs)
      function done() {
        clearTimeout(timer)
        cluster.off('ready', done)
        resolve()
      }
      cluster.once('ready', done)
    })
  }
  return cluster.nodes('master')
}

/**
 * Sends one admin command (`CONFIG GET …`, `INFO …`) to `node` over a short-lived connection of
 * its own (a duplicate with the offline queue on and `timeoutMs` ms command and connect timeouts),
 * so it neither needs the caller's client to be connected yet (floodgate clients have no offline
 * queue) nor fits in its per-command timeout (50 ms by default, which a loaded Redis can exceed).
 * @throws the command's error, or an `Error` when no answer came within `timeoutMs` ms.
 */
export async function askNode(node: Redis, timeoutMs: number, ...command: string[]): Promise<unknown> {
  const probe = node.duplicate({
    lazyConnect: false,
    enableOfflineQueue: true,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
  })
  probe.on('error', () => undefined) // surfaces as the command's rejection
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([
      probe.call(command[0]!, ...command.slice(1)),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
      }),
    ])
  } finally {
    clearTimeout(timer)
    probe.disconnect()
  }
}
