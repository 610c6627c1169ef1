export { type LeaseEndReason, LockAbortedError, LockLostError, LockTimeoutError } from './errors.js'
export {
  ACQUIRE_OUTCOMES,
  type AcquireOutcome,
  LEASE_END_REASONS,
  MutexEventEmitter,
  type MutexEvents,
} from './events.js'
export type { Lease } from './lease.js'
export { type AcquireOptions, Mutex, type MutexOptions } from './mutex.js'
