import { randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { Deadline } from '../../deadline/index.js'
import { StoreUnavailableError } from '../../errors/index.js'
import type { KeySpace } from '../../redis/key_space.js'
import type { RedisClient } from '../../redis/types.js'
import type { BlockedCache } from '../blocked_cache.js'
import { answerThrough, type DecisionSink, failThrough } from '../exact_decider.js'
import type { BatchItem } from '../script_batch.js'
import type { RateLimitPolicy, RateLimitResult } from '../types.js'
import { LeaseCalls, type LeaseReply, leaseReply } from './lease_script.js'

/** Options of {@link LeasedDecider}; see `RateLimiterOptions.lease` for the public ones. */
export interface LeasedDeciderOptions {
  redis: RedisClient
  keySpace: KeySpace
  policy: RateLimitPolicy
  /** Share of the free quota one lease takes, in (0, 1]. */
  fraction: number
  /** Most leases held (LRU). */
  maxKeys: number
  /** Most lease calls of one script call (the calls of one poll phase share one). */
  maxBatch: number
  deadline: Deadline
  /** Names the limiter in timeout errors. */
  what: string
  /** Keys Redis refused with nothing left, answered in-process until their retry time (Envoy's local cache). */
  blocked: BlockedCache
  /** Send a key's next lease call as soon as a decision spends its slice, not when the next decision asks. */
  prefetch: boolean
}

/** This instance's slice of one key's quota. Local times are `performance.now()` ms. */
interface Lease {
  /** The aligned window the slice belongs to (floor(Redis ms / windowMs)). */
  windowIndex: number
  /** Units of the slice not yet admitted. */
  left: number
  resetAtMs: number
  /** Redis TIME of the grant (ms epoch). */
  grantedAtMs: number
  /** When the lease call's reply arrived (local): `nowMs` of an answer counts from it, so it is never ahead of Redis. */
  receivedAt: number
  /**
   * When the slice dies (local): queue time + (window end − grant time). The script ran after the
   * call was queued (a batch leaves later, never earlier), so this is at or before the window's end
   * on the Redis clock: a slice is never spent in the next window.
   */
  endsAt: number
}

/**
 * The leased mode of a Redis limiter: decides from a slice of each key's quota reserved in Redis
 * (`lua/lease-*.lua`), one Redis call per slice instead of one per decision.
 *
 * - A decision the key's live slice covers is answered in-process (`source: 'lease'`).
 * - Otherwise one lease call gives back what is left of the old slice and reserves a new one;
 *   concurrent decisions on the key wait for that call instead of sending their own. The lease
 *   calls of one poll phase share one script call and one deadline ({@link LeaseCalls}); a
 *   decision waiting for Redis costs an entry in that batch and the caller's promise, no promise
 *   or closure of its own.
 * - A refusal with nothing left is remembered until its retry time (`blocked`).
 * - A slice is spent only inside its aligned window; its unused units are given back with the
 *   next lease call of the key, on eviction, or by {@link release}, else they expire with the
 *   window.
 *
 * Bound: every admitted unit was counted in the window's counter when its slice was granted, and
 * a slice is granted only if the algorithm would admit all of it at that moment, so per aligned
 * window the admitted units never pass what the exact script allows (fixed window: the limit;
 * sliding window: the limit, and a trailing window < 2 × limit). What the mode gives up is the
 * other way: units held unused by other instances are refused here until given back or expired.
 */
export class LeasedDecider {
  private readonly leases: LRUCache<string, Lease>
  /** Each key's lease call in flight: concurrent decisions on the key wait for it. */
  private readonly pending = new Map<string, LeaseCall>()
  private readonly calls: LeaseCalls
  /** Grant ids are this prefix (random per decider) and a sequence number. */
  private readonly grantPrefix = `${randomBytes(6).toString('base64url')}:`
  private grants = 0

  constructor(private readonly options: LeasedDeciderOptions) {
    const { redis, keySpace, policy, fraction, maxBatch, deadline, what } = options
    this.calls = new LeaseCalls(redis, keySpace, policy, fraction, maxBatch, deadline, what)
    this.leases = new LRUCache<string, Lease>({
      max: options.maxKeys,
      disposeAfter: (lease, key, reason) => {
        if (reason === 'evict') this.giveBack(key, lease).catch(() => {})
      },
    })
  }

  /** An answer from memory (the live slice, or a block), else undefined. Consumes `cost` from the slice. */
  local(key: string, cost: number): RateLimitResult | undefined {
    const { policy, blocked } = this.options
    const lease = this.leases.get(key)
    // a key holding a slice has no live block (a refused lease call took the slice away first,
    // and no lease call leaves while a block lasts): one lookup on the hot path
    if (lease === undefined) return blocked.check(key, policy, Date.now())
    if (lease.left < cost) return undefined
    const now = performance.now()
    if (now >= lease.endsAt) return undefined
    lease.left -= cost
    // prefetch: the next slice is on its way before the key's next decision, which then need not wait
    if (lease.left === 0 && this.options.prefetch && !this.pending.has(key))
      this.renew(key, 1, noop, noop, undefined, true)
    return {
      allowed: true,
      limit: policy.limit,
      // only units nobody else can take: the other instances' slices and what they took since are unknown here
      remaining: lease.left,
      resetAtMs: lease.resetAtMs,
      retryAfterMs: 0,
      nowMs: Math.floor(lease.grantedAtMs + (now - lease.receivedAt)),
      policy,
      source: 'lease',
    }
  }

  /**
   * Decides with Redis's help: joins the lease call of the key already in flight, else queues one.
   * With `sink`, `resolve` gets the limiter's answer (Redis's or the slice's, or the fallback's
   * after a StoreUnavailableError) and `reject` only other errors; without, `resolve` gets the
   * decider's answer and `reject` any error: StoreUnavailableError when Redis is unreachable or
   * slower than the deadline, ScriptContractError when a reply breaks the script's contract.
   */
  decide(
    key: string,
    cost: number,
    resolve: (result: RateLimitResult) => void,
    reject: (error: unknown) => void,
    sink?: DecisionSink,
  ): void {
    const inFlight = this.pending.get(key)
    if (inFlight === undefined) this.renew(key, cost, resolve, reject, sink)
    else inFlight.wait({ cost, resolve, reject, sink })
  }

  /** Sends the queued lease calls now, so a command sent next runs after them. */
  flush(): void {
    this.calls.flush()
  }

  /** Forgets `key`'s slice and block (after its quota was reset in Redis). */
  forget(key: string): void {
    this.leases.delete(key)
    this.options.blocked.forget(key)
  }

  /**
   * Gives every live slice's unused units back to Redis (for a graceful shutdown), one call per
   * key, in parallel. Never throws: units that could not be given back expire with their window.
   * @returns the units given back.
   */
  async release(): Promise<number> {
    const held = [...this.leases.entries()]
    this.leases.clear()
    const given = await Promise.all(held.map(([key, lease]) => this.giveBack(key, lease).catch(() => 0)))
    return given.reduce((sum, units) => sum + units, 0)
  }

  /**
   * Queues a lease call for `key` that answers this decision; decisions asked meanwhile wait for it.
   * `prefetch`: no decision asked; the call reserves a slice of at least 1 unit, all of it kept.
   */
  private renew(
    key: string,
    cost: number,
    resolve: (result: RateLimitResult) => void,
    reject: (error: unknown) => void,
    sink: DecisionSink | undefined,
    prefetch = false,
  ): void {
    const old = this.leases.get(key)
    // the old slice (dead, or short of `cost`) goes back with this call; if the call fails its
    // units are lost until the window ends, never counted twice
    if (old !== undefined) this.leases.delete(key)
    const giveBack = old !== undefined && old.left > 0 ? old.left : 0
    const giveBackIndex = giveBack > 0 ? (old as Lease).windowIndex : -1
    const grantId = this.grantPrefix + ++this.grants
    const call = new LeaseCall(this, key, cost, performance.now(), grantId, resolve, reject, sink, prefetch)
    this.pending.set(key, call)
    this.calls.add(key, cost, giveBack, giveBackIndex, grantId, call)
  }

  /** A lease call answered: stores its slice, answers its decision, then the decisions that waited. */
  answered(call: LeaseCall, reply: LeaseReply): void {
    const { key } = call
    this.pending.delete(key)
    answer(call, key, this.apply(key, call.cost, call.prefetch ? 0 : call.cost, reply, call.sentAt))
    const waiters = call.waiters
    if (waiters === undefined) return
    for (const waiter of waiters) {
      const local = this.local(key, waiter.cost)
      if (local !== undefined) answer(waiter, key, local)
      else this.decide(key, waiter.cost, waiter.resolve, waiter.reject, waiter.sink)
    }
  }

  /**
   * A lease call failed (Redis error, deadline, broken reply): a store error is every waiting
   * decision's (the fallback answers); after any other error the waiters try again.
   */
  failed(call: LeaseCall, error: unknown): void {
    const { key } = call
    this.pending.delete(key)
    fail(call, key, error)
    const waiters = call.waiters
    if (waiters === undefined) return
    const outage = error instanceof StoreUnavailableError
    for (const waiter of waiters) {
      if (outage) {
        fail(waiter, key, error)
        continue
      }
      const local = this.local(key, waiter.cost)
      if (local !== undefined) answer(waiter, key, local)
      else this.decide(key, waiter.cost, waiter.resolve, waiter.reject, waiter.sink)
    }
  }

  /**
   * Stores a granted slice minus the `spent` units (the decision's cost; 0 for a prefetch), or
   * remembers a refusal of `cost`; returns the answer.
   */
  private apply(
    key: string,
    cost: number,
    spent: number,
    reply: LeaseReply,
    sentAt: number,
  ): RateLimitResult {
    const { policy, blocked } = this.options
    const answer: RateLimitResult = {
      allowed: reply.granted,
      limit: policy.limit,
      // the slice left plus the quota nobody holds at this moment: never above the cluster-wide figure
      remaining: reply.granted ? reply.slice - spent + reply.free : reply.free,
      resetAtMs: reply.resetAtMs,
      retryAfterMs: reply.retryAfterMs,
      nowMs: reply.nowMs,
      policy,
      source: 'redis',
    }
    if (!reply.granted) {
      blocked.remember(key, cost, answer, Date.now())
      return answer
    }
    const windowEndMs = (reply.windowIndex + 1) * policy.windowMs
    this.leases.set(key, {
      windowIndex: reply.windowIndex,
      left: reply.slice - spent,
      resetAtMs: reply.resetAtMs,
      grantedAtMs: reply.nowMs,
      receivedAt: performance.now(),
      endsAt: sentAt + (windowEndMs - reply.nowMs),
    })
    return answer
  }

  /**
   * Gives back the whole slice of a lease call whose reply came after its decision was answered
   * without it: past the deadline the script may still run (a stalled Redis resumes), and its
   * slice would sit reserved until the window ends, refusing others.
   */
  giveBackLate(key: string, late: LeaseReply): void {
    if (!late.granted || late.slice <= 0) return
    this.calls.call(key, 0, late.slice, late.windowIndex).catch(() => {})
  }

  /**
   * Cancels the grant of a lease call whose reply never reached this process (the client's
   * commandTimeout fired while this process was blocked, or the connection dropped): sent later,
   * so on one connection it runs after that call if that call ran at all; if it did not, the
   * script refuses the grant should it still run. Best effort: a cancel that fails too leaves the
   * slice to expire with its window.
   */
  cancelLost(key: string, grantId: string): void {
    this.calls.call(key, 0, 0, -1, '', grantId).catch(() => {})
  }

  /** Gives a live slice's unused units back (a lease call of cost 0); resolves with the units sent. */
  private async giveBack(key: string, lease: Lease): Promise<number> {
    if (lease.left <= 0) return 0 // a slice of a window past the previous one is dropped by the script
    await this.calls.call(key, 0, lease.left, lease.windowIndex)
    return lease.left
  }
}

/** The answer of a prefetch, which no caller awaits. */
const noop = (): void => {}

/** A decision to answer: its cost and where its answer goes (see {@link LeasedDecider.decide}). */
interface Decision {
  readonly cost: number
  readonly resolve: (result: RateLimitResult) => void
  readonly reject: (error: unknown) => void
  readonly sink: DecisionSink | undefined
}

/** Answers `decision` with `result`, through its sink. */
function answer(decision: Decision, key: string, result: RateLimitResult): void {
  answerThrough(decision.sink, key, decision.cost, result, decision.resolve, decision.reject)
}

/** Fails `decision` with `error`: its sink's fallback answers a store error. */
function fail(decision: Decision, key: string, error: unknown): void {
  failThrough(decision.sink, key, decision.cost, error, decision.resolve, decision.reject)
}

/** One key's lease call in flight, with the decision that sent it and those waiting for it. */
class LeaseCall implements BatchItem, Decision {
  waiters: Decision[] | undefined

  constructor(
    private readonly decider: LeasedDecider,
    readonly key: string,
    readonly cost: number,
    /** `performance.now()` when the call was queued (ms): a slice's life counts from it. */
    readonly sentAt: number,
    readonly grantId: string,
    readonly resolve: (result: RateLimitResult) => void,
    readonly reject: (error: unknown) => void,
    readonly sink: DecisionSink | undefined,
    readonly prefetch = false,
  ) {}

  wait(decision: Decision): void {
    if (this.waiters === undefined) this.waiters = [decision]
    else this.waiters.push(decision)
  }

  answered(reply: readonly number[], at: number): void {
    this.decider.answered(this, leaseReply(reply, at))
  }

  failed(error: unknown): void {
    this.decider.failed(this, error)
  }

  answeredLate(reply: readonly number[], at: number): void {
    this.decider.giveBackLate(this.key, leaseReply(reply, at))
  }

  lost(): void {
    this.decider.cancelLost(this.key, this.grantId)
  }
}
