import { EventEmitter } from 'node:events'
import type { LeaseEndReason } from './errors.js'

/** How an `acquire()` ended (the `outcome` label of `floodgate_mutex_acquisitions_total`). */
export const ACQUIRE_OUTCOMES = ['acquired', 'timeout', 'aborted', 'error'] as const
export type AcquireOutcome = (typeof ACQUIRE_OUTCOMES)[number]

/** Why a lease ended (the `reason` label of `floodgate_mutex_leases_ended_total`). */
export const LEASE_END_REASONS: readonly LeaseEndReason[] = ['released', 'lost', 'expired']

/**
 * Events of one or more {@link Mutex} instances (pass one emitter as option `events` to share it
 * across per-entity mutexes). `lock`: the lock key; `waitedMs`: time in `acquire()` (ms).
 */
export interface MutexEvents {
  /** An `acquire()` (or `withLock`) ended: with the lock, or with the error it threw. */
  acquire: [{ lock: string; outcome: AcquireOutcome; waitedMs: number; error?: unknown }]
  /** A lease from `acquire()`/`tryAcquire()` ended; `lost` and `expired` mean the work lost its lock. */
  lease_ended: [{ lock: string; reason: LeaseEndReason }]
}

/** Typed `EventEmitter` of {@link MutexEvents}. */
export class MutexEventEmitter extends EventEmitter<MutexEvents> {}
