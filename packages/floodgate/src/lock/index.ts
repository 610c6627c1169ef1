export { type LeaseEndReason, LockAbortedError, LockLostError, LockTimeoutError } from './errors.js'
export type { Lease } from './lease.js'
export { type AcquireOptions, Mutex, type MutexOptions } from './mutex.js'
