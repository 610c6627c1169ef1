import type { Deadline } from '../deadline/index.js'
import { StoreUnavailableError } from '../errors/index.js'
import type { KeySpace } from '../redis/key_space.js'
import type { RedisClient } from '../redis/types.js'
import { decisionScript, limiterTag, stateSuffixes } from './redis_scripts.js'
import { type BatchItem, ScriptBatcher } from './script_batch.js'
import type { RateLimitPolicy, RateLimitResult } from './types.js'

/** Options of {@link ExactDecider}; see `RateLimiterOptions` for the public ones. */
export interface ExactDeciderOptions {
  redis: RedisClient
  keySpace: KeySpace
  policy: RateLimitPolicy
  /** Most decisions of one script call (1: a call per decision). */
  maxBatch: number
  deadline: Deadline
  /** Names the limiter in timeout errors. */
  what: string
}

/**
 * Turns Redis's answer, or the error that stopped it, into the limiter's answer, once per limiter
 * (so a decision carries no closures of its own): the limiter reports it (events, blocked cache)
 * and answers a StoreUnavailableError with its fallback.
 */
export interface DecisionSink {
  fromRedis(key: string, cost: number, result: RateLimitResult): RateLimitResult
  fromFallback(key: string, cost: number, error: StoreUnavailableError): RateLimitResult
}

/** Costs as script arguments, 1 shared (the usual cost: no array per decision). */
const COST_ONE: readonly string[] = ['1']

/**
 * The exact mode of a Redis limiter: every decision runs the algorithm's script in Redis, and the
 * decisions of one event-loop poll phase share one script call ({@link ScriptBatcher}), decided in
 * the order they were asked on one Redis TIME, one deadline watching the call.
 */
export class ExactDecider {
  private readonly batcher: ScriptBatcher
  private readonly taggedOf: (key: string) => string
  private readonly policy: RateLimitPolicy

  constructor(options: ExactDeciderOptions) {
    const { redis, keySpace, policy, maxBatch, deadline, what } = options
    const { script, shared } = decisionScript(policy)
    this.policy = policy
    this.taggedOf = limiterTag(keySpace, policy)
    this.batcher = new ScriptBatcher({
      client: redis,
      script,
      suffixes: stateSuffixes(policy.algorithm).map((suffix) => `:${suffix}`),
      shared,
      head: 1,
      width: 4,
      maxItems: maxBatch,
      deadline,
      what,
    })
  }

  /**
   * Queues one decision of `cost` units (validated) for `key`. With `sink`, `resolve` gets the
   * limiter's answer (Redis's, or the fallback's after a StoreUnavailableError) and `reject` only
   * a ScriptContractError; without, `resolve` gets Redis's answer and `reject` any error.
   */
  decide(
    key: string,
    cost: number,
    resolve: (result: RateLimitResult) => void,
    reject: (error: unknown) => void,
    sink?: DecisionSink,
  ): void {
    const args = cost === 1 ? COST_ONE : [String(cost)]
    this.batcher.add(
      this.taggedOf(key),
      args,
      new PendingDecision(key, cost, this.policy, resolve, reject, sink),
    )
  }

  /** Sends the queued decisions now (before a reset or peek of this limiter, so they run first). */
  flush(): void {
    this.batcher.flush()
  }
}

/** One queued decision: maps its part of the batch reply, `[allowed, remaining, resetAtMs, retryAfterMs]`. */
class PendingDecision implements BatchItem {
  constructor(
    private readonly key: string,
    private readonly cost: number,
    private readonly policy: RateLimitPolicy,
    private readonly resolve: (result: RateLimitResult) => void,
    private readonly reject: (error: unknown) => void,
    private readonly sink: DecisionSink | undefined,
  ) {}

  answered(reply: readonly number[], at: number): void {
    const result: RateLimitResult = {
      allowed: reply[at] === 1,
      limit: this.policy.limit,
      remaining: reply[at + 1]!,
      resetAtMs: reply[at + 2]!,
      retryAfterMs: reply[at + 3]!,
      nowMs: reply[0]!,
      policy: this.policy,
      source: 'redis',
    }
    answerThrough(this.sink, this.key, this.cost, result, this.resolve, this.reject)
  }

  failed(error: unknown): void {
    failThrough(this.sink, this.key, this.cost, error, this.resolve, this.reject)
  }
}

/**
 * Answers a decision with Redis's `result`: through `sink` if given (a throwing listener fails
 * this decision only, not the rest of its batch), else as is.
 */
export function answerThrough(
  sink: DecisionSink | undefined,
  key: string,
  cost: number,
  result: RateLimitResult,
  resolve: (result: RateLimitResult) => void,
  reject: (error: unknown) => void,
): void {
  if (sink === undefined) {
    resolve(result)
    return
  }
  try {
    resolve(sink.fromRedis(key, cost, result))
  } catch (error) {
    reject(error)
  }
}

/** Fails a decision with `error`; with `sink`, its fallback answers a StoreUnavailableError instead. */
export function failThrough(
  sink: DecisionSink | undefined,
  key: string,
  cost: number,
  error: unknown,
  resolve: (result: RateLimitResult) => void,
  reject: (error: unknown) => void,
): void {
  if (sink === undefined || !(error instanceof StoreUnavailableError)) {
    reject(error)
    return
  }
  try {
    resolve(sink.fromFallback(key, cost, error))
  } catch (thrown) {
    reject(thrown)
  }
}
