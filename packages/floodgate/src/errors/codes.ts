/**
 * Every `code` a floodgate error carries: one catalogue, one prefix. Codes are stable across
 * versions (match on them, not on messages); the class that throws each is named beside it.
 */
export const FLOODGATE_ERROR_CODES = {
  /** {@link InvalidArgumentError}: an option or argument out of range or of the wrong type. */
  INVALID_ARGUMENT: 'FLOODGATE_INVALID_ARGUMENT',
  /** `StoreUnavailableError` (and `RedisTimeoutError`): a Redis call failed or timed out. */
  STORE_UNAVAILABLE: 'FLOODGATE_STORE_UNAVAILABLE',
  /** `ScriptContractError`: a Lua script answered outside its contract (a bug, not an outage). */
  SCRIPT_CONTRACT: 'FLOODGATE_SCRIPT_CONTRACT',
  /** `LuaIncludeError`: a script's `--- @include` is missing or forms a cycle. */
  LUA_INCLUDE: 'FLOODGATE_LUA_INCLUDE',
  /** A `FloodgateError` from the metrics: prom-client, an optional peer, is not installed. */
  MISSING_PEER: 'FLOODGATE_MISSING_PEER',
  /** `LockTimeoutError`: `acquire()` gave up after its `waitMs`. */
  LOCK_TIMEOUT: 'FLOODGATE_LOCK_TIMEOUT',
  /** `LockAbortedError`: `acquire()` was aborted by its signal. */
  LOCK_ABORTED: 'FLOODGATE_LOCK_ABORTED',
  /** `LockLostError`: a lease was lost or expired. */
  LOCK_LOST: 'FLOODGATE_LOCK_LOST',
  /** `LockLostError`: a lease ended by its own `release()`. */
  LOCK_RELEASED: 'FLOODGATE_LOCK_RELEASED',
  /** `BloomRebuildError`: a rebuild was superseded or lost its lock. */
  BLOOM_REBUILD_FAILED: 'FLOODGATE_BLOOM_REBUILD_FAILED',
  /** `BloomRebuiltElsewhereError`: a conditional rebuild found a generation published meanwhile. */
  BLOOM_REBUILT_ELSEWHERE: 'FLOODGATE_BLOOM_REBUILT_ELSEWHERE',
  /** `RebuildAbortedError`: a counters rebuild stopped (lock lost, closing). */
  REBUILD_ABORTED: 'FLOODGATE_REBUILD_ABORTED',
  /** `CountersDatabaseError`: PostgreSQL failed under the counters. */
  DATABASE_ERROR: 'FLOODGATE_DATABASE_ERROR',
  /** `InvalidEventError`: an interaction event that cannot be applied. */
  INVALID_EVENT: 'FLOODGATE_INVALID_EVENT',
  /** `ReplicationTimeoutError`: too few replicas confirmed a write in time. */
  REPLICATION_TIMEOUT: 'FLOODGATE_REPLICATION_TIMEOUT',
  /** `ItemGoneError`: a toggle or play of an item `Interactions.forget` removed (tombstone set). */
  ITEM_GONE: 'FLOODGATE_ITEM_GONE',
  /** `OverloadedError`: the concurrency guard shed the call. */
  OVERLOADED: 'FLOODGATE_OVERLOADED',
  /** `GuardAbortedError`: a call queued in the concurrency guard was aborted. */
  GUARD_ABORTED: 'FLOODGATE_GUARD_ABORTED',
  /** `RateLimitWaitError`: `waitUntilAllowed` could not be admitted in time. */
  RATE_LIMIT_WAIT: 'FLOODGATE_RATE_LIMIT_WAIT',
} as const

/** One of {@link FLOODGATE_ERROR_CODES}. */
export type FloodgateErrorCode = (typeof FLOODGATE_ERROR_CODES)[keyof typeof FLOODGATE_ERROR_CODES]
