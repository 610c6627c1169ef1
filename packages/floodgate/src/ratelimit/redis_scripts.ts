import { ScriptContractError } from '../errors/index.js'
import type { KeySpace } from '../redis/key_space.js'
import { LuaScript } from '../redis/lua_script.js'
import type { RedisClient } from '../redis/types.js'
import type { RateLimitAlgorithm, RateLimitPolicy } from './types.js'

/** Redis key area of every limiter key: `<prefix>:rl:{<policy name>:<key>}:<suffix>`. */
export const RATE_LIMIT_AREA = 'rl'

interface AlgorithmScript {
  /**
   * The decision script, a batch of decisions (`-n.lua`): KEYS = each decision's keys (`suffixes`),
   * ARGV = limit, windowMs[, burst], then each decision's cost; replies nowMs, then
   * `[allowed, remaining, resetAtMs, retryAfterMs]` per decision.
   */
  script: LuaScript
  /** The read-only twin: `[remaining, resetAtMs, nowMs]`, same keys, ARGV limit, windowMs[, burst]. */
  peek: LuaScript
  /** Key suffixes, all under the limiter key's hash tag. */
  suffixes: readonly string[]
  /** Whether burst follows windowMs in ARGV. */
  burst: boolean
}

// One literal URL per script: the build embeds each `.lua` file where its URL is written.
const scripts: Record<RateLimitAlgorithm, AlgorithmScript> = {
  fixedWindow: {
    script: new LuaScript(new URL('./lua/fixed-window-n.lua', import.meta.url)),
    peek: new LuaScript(new URL('./lua/peek-fixed-window-1.lua', import.meta.url)),
    suffixes: ['fw'],
    burst: false,
  },
  slidingLog: {
    script: new LuaScript(new URL('./lua/sliding-log-n.lua', import.meta.url)),
    peek: new LuaScript(new URL('./lua/peek-sliding-log-1.lua', import.meta.url)),
    suffixes: ['log'],
    burst: false,
  },
  slidingWindow: {
    script: new LuaScript(new URL('./lua/sliding-window-n.lua', import.meta.url)),
    peek: new LuaScript(new URL('./lua/peek-sliding-window-2.lua', import.meta.url)),
    suffixes: ['sw0', 'sw1'],
    burst: false,
  },
  tokenBucket: {
    script: new LuaScript(new URL('./lua/token-bucket-n.lua', import.meta.url)),
    peek: new LuaScript(new URL('./lua/peek-token-bucket-1.lua', import.meta.url)),
    suffixes: ['tb'],
    burst: true,
  },
  gcra: {
    script: new LuaScript(new URL('./lua/gcra-n.lua', import.meta.url)),
    peek: new LuaScript(new URL('./lua/peek-gcra-1.lua', import.meta.url)),
    suffixes: ['tat'],
    burst: true,
  },
}

/** The key suffixes of an algorithm's state (`fw`, `sw0`…), in the order its scripts take them. */
export function stateSuffixes(algorithm: RateLimitAlgorithm): readonly string[] {
  return scripts[algorithm].suffixes
}

/**
 * Maps a limiter key to its hash tag `<prefix>:rl:{<name>:<key>}`: `keySpace.tagged` without its
 * brace-escaping regex when the key holds no brace (once per decision, so kept cheap).
 */
export function limiterTag(keySpace: KeySpace, policy: RateLimitPolicy): (key: string) => string {
  const head = keySpace.tagged(RATE_LIMIT_AREA, `${policy.name}:`).slice(0, -1)
  return (key) =>
    key.indexOf('{') === -1 && key.indexOf('}') === -1
      ? `${head + key}}`
      : keySpace.tagged(RATE_LIMIT_AREA, `${policy.name}:${key}`)
}

/** The Redis keys one limiter key uses (exported for tests and for `MEMORY USAGE` measurements). */
export function rateLimitKeys(keySpace: KeySpace, policy: RateLimitPolicy, key: string): string[] {
  const tagged = keySpace.tagged(RATE_LIMIT_AREA, `${policy.name}:${key}`)
  return scripts[policy.algorithm].suffixes.map((suffix) => `${tagged}:${suffix}`)
}

/** What a read-only look at a limiter key finds; times in ms (Redis clock). */
export interface PeekReply {
  remaining: number
  resetAtMs: number
  nowMs: number
}

/**
 * Reads `key`'s quota without consuming or writing (the algorithm's `peek_*.lua`).
 * @throws {StoreUnavailableError} on a Redis or connection error.
 * @throws {ScriptContractError} if the reply is not three integers.
 */
export async function peekRateLimit(
  client: RedisClient,
  keySpace: KeySpace,
  policy: RateLimitPolicy,
  key: string,
): Promise<PeekReply> {
  const { peek, burst } = scripts[policy.algorithm]
  const args = burst ? [policy.limit, policy.windowMs, policy.burst] : [policy.limit, policy.windowMs]
  const reply = await peek.run(client, rateLimitKeys(keySpace, policy, key), args)
  if (!Array.isArray(reply) || reply.length !== 3 || !reply.every((n) => typeof n === 'number'))
    throw new ScriptContractError(peek.name, reply)
  const [remaining, resetAtMs, nowMs] = reply as number[]
  return { remaining: remaining as number, resetAtMs: resetAtMs as number, nowMs: nowMs as number }
}

/** A limiter's decision script and its ARGV before the decisions' costs (stringified once). */
export function decisionScript(policy: RateLimitPolicy): { script: LuaScript; shared: string[] } {
  const { script, burst } = scripts[policy.algorithm]
  const shared = [String(policy.limit), String(policy.windowMs)]
  if (burst) shared.push(String(policy.burst))
  return { script, shared }
}
