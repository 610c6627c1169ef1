import type { ChainableCommander } from 'ioredis'
import { StoreUnavailableError } from '../errors/index.js'

/**
 * Runs a pipeline (or MULTI) and returns its replies in order.
 * @throws {StoreUnavailableError} when the round trip fails or any command in it failed (the first error is the `cause`).
 */
export async function execAll(pipeline: ChainableCommander, what: string): Promise<unknown[]> {
  let replies: [Error | null, unknown][] | null
  try {
    replies = await pipeline.exec()
  } catch (error) {
    throw new StoreUnavailableError(`${what}: ${messageOf(error)}`, { cause: error })
  }
  if (replies === null) throw new StoreUnavailableError(`${what}: transaction aborted`)
  return replies.map(([error, value]) => {
    if (error) throw new StoreUnavailableError(`${what}: ${error.message}`, { cause: error })
    return value
  })
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
