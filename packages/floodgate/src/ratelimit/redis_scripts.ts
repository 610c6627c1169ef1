import { ScriptContractError } from '../errors/index.js'
import type { KeySpace } from '../redis/key_space.js'
import { LuaScript } from '../redis/lua_script.js'
import type { RedisClient } from '../redis/types.js'
import type { Decision } from './decision.js'
import type { RateLimitAlgorithm, RateLimitPolicy } from './types.js'

/** Redis key area of every limiter key: `<prefix>:rl:{<policy name>:<key>}:<suffix>`. */
export const RATE_LIMIT_AREA = 'rl'

interface AlgorithmScript {
  script: LuaScript
  /** Key suffixes, all under the limiter key's hash tag. */
  suffixes: readonly string[]
  /** Whether ARGV[4] (burst) is passed. */
  burst: boolean
}

const lua = (file: string) => new LuaScript(new URL(`./lua/${file}`, import.meta.url))

const scripts: Record<RateLimitAlgorithm, AlgorithmScript> = {
  fixedWindow: { script: lua('fixed_window-1.lua'), suffixes: ['fw'], burst: false },
  slidingLog: { script: lua('sliding_log-2.lua'), suffixes: ['log', 'seq'], burst: false },
  slidingWindow: { script: lua('sliding_window-2.lua'), suffixes: ['sw0', 'sw1'], burst: false },
  tokenBucket: { script: lua('token_bucket-1.lua'), suffixes: ['tb'], burst: true },
  gcra: { script: lua('gcra-1.lua'), suffixes: ['tat'], burst: true },
}

/** The Redis keys one limiter key uses (exported for tests and for `MEMORY USAGE` measurements). */
export function rateLimitKeys(keySpace: KeySpace, policy: RateLimitPolicy, key: string): string[] {
  const tag = `${policy.name}:${key}`
  return scripts[policy.algorithm].suffixes.map((suffix) => keySpace.tagged(RATE_LIMIT_AREA, tag, suffix))
}

/**
 * One decision: one EVALSHA of the algorithm's script (LuaScript reloads once on NOSCRIPT).
 * @throws {StoreUnavailableError} on a Redis or connection error.
 * @throws {ScriptContractError} if the reply is not five integers.
 */
export async function runRateLimitScript(
  client: RedisClient,
  keys: readonly string[],
  policy: RateLimitPolicy,
  cost: number,
): Promise<Decision> {
  const entry = scripts[policy.algorithm]
  const args: number[] = [policy.limit, policy.windowMs, cost]
  if (entry.burst) args.push(policy.burst)
  const reply = await entry.script.run(client, keys, args)
  if (!Array.isArray(reply) || reply.length !== 5 || !reply.every((v) => typeof v === 'number')) {
    throw new ScriptContractError(entry.script.name, reply)
  }
  const [allowed, remaining, resetAtMs, retryAfterMs, nowMs] = reply as [
    number,
    number,
    number,
    number,
    number,
  ]
  return { allowed: allowed === 1, remaining, resetAtMs, retryAfterMs, nowMs }
}
