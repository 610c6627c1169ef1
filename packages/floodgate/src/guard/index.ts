export { ConcurrencyGuard, type RunOptions } from './concurrency_guard.js'
export { GuardAbortedError, OverloadedError, SHED_REASONS, type ShedReason } from './errors.js'
export { GuardEventEmitter, type GuardEvents } from './events.js'
export {
  GUARD_DEFAULTS,
  type GuardOptions,
  type ResolvedGuardOptions,
  resolveGuardOptions,
} from './options.js'
