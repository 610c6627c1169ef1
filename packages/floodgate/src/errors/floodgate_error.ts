import type { FloodgateErrorCode } from './codes.js'

/**
 * Base class of every error floodgate throws. `code` is one of `FLOODGATE_ERROR_CODES` (`codes.ts`),
 * stable across versions (match on it, not on the message); `cause` carries the underlying
 * error (a Redis or driver error, say) when there is one.
 */
export class FloodgateError extends Error {
  readonly code: FloodgateErrorCode

  constructor(code: FloodgateErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = new.target.name
    this.code = code
  }
}

/** An option or argument is out of range or of the wrong type. `code`: `FLOODGATE_INVALID_ARGUMENT`. */
export class InvalidArgumentError extends FloodgateError {
  /** Dotted path of the offending option, e.g. `l2.ttlMs.min`. */
  readonly field: string

  constructor(field: string, message: string) {
    super('FLOODGATE_INVALID_ARGUMENT', `${field}: ${message}`)
    this.field = field
  }
}

/** A Redis call failed or did not answer within its timeout. `code`: `FLOODGATE_STORE_UNAVAILABLE`. */
export class StoreUnavailableError extends FloodgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('FLOODGATE_STORE_UNAVAILABLE', message, options)
  }
}

/** A Lua script answered with something its contract does not allow. `code`: `FLOODGATE_SCRIPT_CONTRACT`. */
export class ScriptContractError extends FloodgateError {
  constructor(script: string, reply: unknown) {
    super(
      'FLOODGATE_SCRIPT_CONTRACT',
      `script ${script} returned an unexpected reply: ${JSON.stringify(reply)}`,
    )
  }
}

/**
 * A Lua script's `--- @include` could not be resolved (see `redis/lua_include.ts`).
 * `code`: `FLOODGATE_LUA_INCLUDE`.
 */
export class LuaIncludeError extends FloodgateError {
  /** `missing`: a file could not be read; `cycle`: a file includes itself through its includes. */
  readonly reason: 'missing' | 'cycle'
  /** Absolute paths from the top-level script down to the offending file. */
  readonly chain: readonly string[]

  constructor(reason: 'missing' | 'cycle', file: string, chain: readonly string[], cause?: unknown) {
    const via = chain.join(' -> ')
    super(
      'FLOODGATE_LUA_INCLUDE',
      reason === 'missing' ? `Lua include not found: ${file} (${via})` : `Lua include cycle: ${via}`,
      { cause },
    )
    this.reason = reason
    this.chain = chain
  }
}
