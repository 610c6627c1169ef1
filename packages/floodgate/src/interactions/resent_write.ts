import { setTimeout as sleep } from 'node:timers/promises'
import { DEADLINE_DEFAULTS } from '../deadline/defaults.js'
import type { LuaScript } from '../redis/lua_script.js'
import { isCluster, type RedisClient } from '../redis/types.js'
import { REPLICATED_WRITE_DEFAULTS } from './defaults.js'
import { refusedBeforeRun } from './node_replies.js'

/**
 * How long a write refused before it ran may be resent (ms): the client's command timeout (the
 * service's `REDIS_MAX_WAIT_MS`), else {@link DEADLINE_DEFAULTS}.maxWaitMs (2 s).
 */
export function writeCapMs(redis: RedisClient): number {
  const nodeOptions = isCluster(redis) ? redis.options.redisOptions : redis.options
  return nodeOptions?.commandTimeout ?? DEADLINE_DEFAULTS.maxWaitMs
}

/**
 * Runs a write script (no WAIT) and resends it every `clusterDownRetryMs` (100 ms) while Redis
 * refuses it before running (CLUSTERDOWN, TRYAGAIN: a cluster refuses every command from a
 * master's failure to its replica's promotion), until `capMs` ({@link writeCapMs}) has passed. Done here, not by
 * the client's `retryDelayOnClusterDown`, so the write path keeps its guarantee (healthy shards'
 * writes outlast a failover) on a client that fails reads fast (video-api sets it to 0).
 * @throws {StoreUnavailableError} as {@link LuaScript.run}: the last refusal, or any other failure.
 */
export async function runResendingRefusals(
  script: LuaScript,
  redis: RedisClient,
  keys: readonly string[],
  args: readonly (string | number)[],
  capMs: number,
): Promise<unknown> {
  const deadline = Date.now() + capMs
  const pause = REPLICATED_WRITE_DEFAULTS.clusterDownRetryMs
  for (;;) {
    try {
      return await script.run(redis, keys, args)
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error
      const refused = cause instanceof Error && refusedBeforeRun(cause) === 'down'
      if (!refused || Date.now() + pause >= deadline) throw error
      await sleep(pause)
    }
  }
}
