import { FloodgateError } from '../errors/index.js'

/**
 * A rebuild did not complete: its rebuild lock was lost, its signal aborted,
 * another rebuild superseded it, or its fresh shard keys vanished. The served
 * generation is unchanged. `code`: `FLOODGATE_BLOOM_REBUILD_FAILED`.
 */
export class BloomRebuildError extends FloodgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('FLOODGATE_BLOOM_REBUILD_FAILED', message, options)
  }
}

/**
 * A rebuild asked with `ifReadyIs` found, once it held the rebuild lock, that another instance
 * had published `generation` meanwhile: nothing was rebuilt. `code`: `FLOODGATE_BLOOM_REBUILT_ELSEWHERE`.
 */
export class BloomRebuiltElsewhereError extends FloodgateError {
  constructor(
    /** The generation `ready` points at. */
    readonly generation: number,
  ) {
    super('FLOODGATE_BLOOM_REBUILT_ELSEWHERE', `bloom: generation ${generation} was published meanwhile`)
  }
}
