import type { RedisClient } from '../redis/index.js'
import { positiveInteger } from '../validation/index.js'
import { LockLostError } from './errors.js'
import { extendReply, extendScript, releaseReply, releaseScript } from './scripts.js'

/** A held lock. Obtained from `Mutex.tryAcquire()` or `Mutex.acquire()`. */
export interface Lease {
  /** The holder's random token (128-bit, hex); the lock key holds it while the lease is ours. */
  readonly token: string
  /**
   * Fencing token: strictly increasing per lock (INCR of the fence key at
   * acquisition). Pass it to the protected resource, which rejects any write
   * carrying a token lower than the highest it has seen (Kleppmann, "How to do
   * distributed locking", 2016), so a holder paused past its TTL cannot clobber
   * a newer holder's work.
   */
  readonly fencingToken: number
  /**
   * Aborted when the lease is known to be over; `signal.reason` is a
   * {@link LockLostError} whose `reason` says why (`lost`, `expired`, `released`).
   * It aborts (`expired`) at the latest at the local deadline: the send time of the last
   * successful acquire, `extend()` or watchdog renewal plus its TTL (ms), by the local clock,
   * whatever the client's command timeout and also while a renewal is still in flight.
   */
  readonly signal: AbortSignal
  /**
   * Compare-and-PEXPIRE: resets the TTL to `ttlMs` (ms) if the key still holds
   * our token. Never re-creates the key. Resolves false (and aborts `signal`)
   * when the lock was lost; resolves false without a Redis call once `signal` is aborted.
   * @param ttlMs new TTL (ms), integer ≥ 1. @default the Mutex's `ttlMs`
   * @throws {StoreUnavailableError} on a Redis error (the signal is not aborted then).
   * @throws {InvalidArgumentError} when `ttlMs` is not an integer ≥ 1.
   */
  extend(ttlMs?: number): Promise<boolean>
  /**
   * Compare-and-delete: deletes the key if it still holds our token. Stops the
   * watchdog and aborts `signal` (reason `released`) in every case.
   * Resolves false when the lock was no longer ours (nothing was touched).
   * @throws {StoreUnavailableError} on a Redis error (the key then expires by its TTL).
   */
  release(): Promise<boolean>
}

/** @internal How a {@link RedisLease} is set up by the Mutex. */
export interface LeaseInit {
  redis: RedisClient
  lockKey: string
  token: string
  fencingToken: number
  ttlMs: number
  /** `Date.now()` just before the acquire command was sent (the TTL runs from a later instant on the server). */
  sentAt: number
  watchdog: boolean
}

/**
 * @internal The Lease implementation. Keeps a conservative local deadline
 * (send time of the last successful acquire/extend + its TTL): the server's
 * deadline is never earlier than that, up to clock-rate drift. One timer ends
 * the lease at that deadline; the watchdog's renewal timer is separate, so a
 * renewal stuck in flight cannot postpone the end.
 */
export class RedisLease implements Lease {
  readonly token: string
  readonly fencingToken: number
  private readonly controller = new AbortController()
  private readonly redis: RedisClient
  private readonly lockKey: string
  private readonly ttlMs: number
  private readonly watchdog: boolean
  private deadline: number
  private expiryTimer: NodeJS.Timeout | undefined
  private renewalTimer: NodeJS.Timeout | undefined

  constructor(init: LeaseInit) {
    this.redis = init.redis
    this.lockKey = init.lockKey
    this.token = init.token
    this.fencingToken = init.fencingToken
    this.ttlMs = init.ttlMs
    this.watchdog = init.watchdog
    this.deadline = init.sentAt + init.ttlMs
    this.armExpiry()
    this.scheduleRenewal()
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  async extend(ttlMs: number = this.ttlMs): Promise<boolean> {
    positiveInteger('ttlMs', ttlMs)
    if (this.controller.signal.aborted) return false
    const sentAt = Date.now()
    const reply = await extendScript.run(this.redis, [this.lockKey], [this.token, ttlMs])
    return this.onExtendReply(reply, sentAt, ttlMs)
  }

  async release(): Promise<boolean> {
    this.end('released')
    const reply = await releaseScript.run(this.redis, [this.lockKey], [this.token])
    return releaseReply(reply) === 'released'
  }

  private onExtendReply(reply: unknown, sentAt: number, ttlMs: number): boolean {
    const extended = extendReply(reply) === 'extended'
    if (this.controller.signal.aborted) return false
    if (!extended) {
      this.end('lost')
      return false
    }
    this.deadline = sentAt + ttlMs
    this.armExpiry()
    this.scheduleRenewal()
    return true
  }

  /** (Re)arms the end of the lease at the local deadline. */
  private armExpiry(): void {
    clearTimeout(this.expiryTimer)
    if (this.controller.signal.aborted) return
    this.expiryTimer = setTimeout(() => this.end('expired'), Math.max(0, this.deadline - Date.now()))
    this.expiryTimer.unref()
  }

  /** With the watchdog, arms the next renewal: `ttlMs / 3` after a success, `delayMs` after an error. */
  private scheduleRenewal(delayMs = Math.floor(this.ttlMs / 3)): void {
    clearTimeout(this.renewalTimer)
    if (!this.watchdog || this.controller.signal.aborted) return
    this.renewalTimer = setTimeout(() => void this.renew(), delayMs)
    this.renewalTimer.unref()
  }

  /** One watchdog tick: renew; on a Redis error retry soon, giving up when the TTL would have passed. */
  private async renew(): Promise<void> {
    const sentAt = Date.now()
    try {
      const reply = await extendScript.run(this.redis, [this.lockKey], [this.token, this.ttlMs])
      this.onExtendReply(reply, sentAt, this.ttlMs)
    } catch (error) {
      if (this.controller.signal.aborted) return
      const retryMs = Math.max(10, Math.floor(this.ttlMs / 10))
      if (Date.now() + retryMs >= this.deadline) this.end('expired', error)
      else this.scheduleRenewal(retryMs)
    }
  }

  private end(reason: 'lost' | 'expired' | 'released', cause?: unknown): void {
    clearTimeout(this.expiryTimer)
    clearTimeout(this.renewalTimer)
    if (this.controller.signal.aborted) return
    const options = cause === undefined ? undefined : { cause }
    this.controller.abort(new LockLostError(this.lockKey, reason, options))
  }
}
