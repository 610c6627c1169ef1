import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { ScriptContractError, StoreUnavailableError } from '../errors/index.js'
import type { RedisClient } from './types.js'

/**
 * One Lua script, read from its own `.lua` file, run with EVALSHA.
 *
 * NOSCRIPT (the server lost its script cache: a restart, a failover, `SCRIPT
 * FLUSH`) is answered by one EVAL of the full source, which also re-caches it
 * on that node; later calls go back to EVALSHA. During an outage the calls
 * fail with connection errors, not NOSCRIPT, so nothing is retried per request.
 * The same fallback is what ioredis' `defineCommand` does; this class keeps it
 * independent of the client instance so one script serves every client.
 */
export class LuaScript {
  readonly name: string
  readonly source: string
  readonly sha1: string
  readonly numberOfKeys: number

  /**
   * @param url location of the `.lua` file, e.g. `new URL('./acquire-1.lua', import.meta.url)`.
   *   The file name must end in `-<numberOfKeys>.lua` (BullMQ's convention).
   * @throws {Error} if the file is missing or its name does not carry the key count.
   */
  constructor(url: URL) {
    const file = url.pathname.split('/').pop() ?? ''
    const match = /^(.+)-(\d+)\.lua$/.exec(file)
    if (!match) throw new Error(`Lua file name must look like name-<numKeys>.lua: ${file}`)
    this.name = match[1]!
    this.numberOfKeys = Number(match[2])
    this.source = readFileSync(url, 'utf8')
    this.sha1 = createHash('sha1').update(this.source).digest('hex')
  }

  /**
   * Runs the script: one EVALSHA round trip (two after a script-cache loss).
   * @throws {StoreUnavailableError} on any Redis or connection error, with the original as `cause`.
   */
  async run(
    client: RedisClient,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[],
  ): Promise<unknown> {
    if (keys.length !== this.numberOfKeys) {
      throw new ScriptContractError(this.name, `expected ${this.numberOfKeys} keys, got ${keys.length}`)
    }
    try {
      return await this.evalsha(client, keys, args)
    } catch (error) {
      if (isNoScript(error)) {
        try {
          return await client.eval(this.source, keys.length, ...keys, ...args)
        } catch (evalError) {
          throw toStoreError(this.name, evalError)
        }
      }
      throw toStoreError(this.name, error)
    }
  }

  private evalsha(client: RedisClient, keys: readonly string[], args: readonly (string | number | Buffer)[]) {
    return client.evalsha(this.sha1, keys.length, ...keys, ...args)
  }
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}

function toStoreError(script: string, error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error
  const message = error instanceof Error ? error.message : String(error)
  return new StoreUnavailableError(`Redis script ${script} failed: ${message}`, { cause: error })
}
