import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { Command } from 'ioredis'
import { ScriptContractError, StoreUnavailableError } from '../errors/index.js'
import { resolveLuaIncludes } from './lua_include.js'
import { isCluster, type RedisClient } from './types.js'

/**
 * A script's file name and text (its `--- @include`s already resolved), written in place of its
 * `new URL(…, import.meta.url)` by the package build (`scripts/embed-lua.mjs`), so the built and
 * bundled code reads no file.
 */
export interface EmbeddedLua {
  /** File name, e.g. `acquire-2.lua`. */
  file: string
  source: string
}

/**
 * One Lua script, read from its own `.lua` file, run with EVALSHA.
 *
 * NOSCRIPT (the server lost its script cache: a restart, a failover, `SCRIPT
 * FLUSH`) is answered by one EVAL of the full source, which also re-caches it
 * on that node; later calls go back to EVALSHA. One reload per process and
 * script: the first call to see NOSCRIPT sends the EVAL; calls already in flight
 * when it did wait for it, then send EVALSHA once more (EVAL only if that gets
 * NOSCRIPT again: another node, or the reload failed). During an outage the calls
 * fail with connection errors, not NOSCRIPT, so nothing is retried per request.
 * ioredis' `defineCommand` falls back the same way, once per call; this class
 * keeps it independent of the client instance so one script serves every client.
 */
export class LuaScript {
  readonly name: string
  readonly source: string
  readonly sha1: string
  /** Keys of every call; undefined for a `-n.lua` script, whose calls each pass their own count. */
  readonly numberOfKeys: number | undefined
  /** Reloads this process started; a NOSCRIPT on a command sent before the latest one waits for it. */
  private generation = 0
  /** Settles (never rejects) when the latest reload's EVAL has answered. */
  private reloading: Promise<void> = Promise.resolve()

  /**
   * @param lua location of the `.lua` file: a `new URL` of a string literal such as
   *   `'./acquire-2.lua'` and `import.meta.url` (from TypeScript source the file is read; the
   *   build replaces that expression with the file's {@link EmbeddedLua} text). A file's
   *   `--- @include "<path>"` lines are replaced by the included files (see `lua_include.ts`).
   *   The file name must end in `-<numberOfKeys>.lua` (BullMQ's convention), or in `-n.lua` for a
   *   script whose calls carry a varying number of keys (a batch: so many keys per item).
   * @throws {Error} if the file name does not carry the key count.
   * @throws {LuaIncludeError} if the file or one of its includes is missing, or includes form a cycle.
   */
  constructor(lua: URL | EmbeddedLua) {
    const file = lua instanceof URL ? (lua.pathname.split('/').pop() ?? '') : lua.file
    const match = /^(.+)-(\d+|n)\.lua$/.exec(file)
    if (!match) throw new Error(`Lua file name must look like name-<numKeys>.lua or name-n.lua: ${file}`)
    this.name = match[1]!
    this.numberOfKeys = match[2] === 'n' ? undefined : Number(match[2])
    this.source = lua instanceof URL ? resolveLuaIncludes(fileURLToPath(lua)) : lua.source
    this.sha1 = createHash('sha1').update(this.source).digest('hex')
  }

  /**
   * Runs the script: one EVALSHA round trip (two after a script-cache loss).
   * The command is built directly (no argument spreading through the client's generated
   * `evalsha` method); the client's `keyPrefix` and `commandTimeout` apply as usual.
   * `replies: 'buffer'`: bulk strings come back as Buffers (binary values), integers as numbers.
   * @throws {StoreUnavailableError} on any Redis or connection error, with the original as `cause`.
   * @throws {ScriptContractError} when `keys` does not hold `numberOfKeys` keys.
   */
  run(
    client: RedisClient,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[],
    replies: ReplyEncoding = 'utf8',
  ): Promise<unknown> {
    if (this.numberOfKeys !== undefined && keys.length !== this.numberOfKeys) {
      return Promise.reject(
        new ScriptContractError(this.name, `expected ${this.numberOfKeys} keys, got ${keys.length}`),
      )
    }
    const argv: (string | number | Buffer)[] = [this.sha1, keys.length]
    for (const key of keys) argv.push(key)
    for (const arg of args) argv.push(arg)
    return this.send(client, argv, replies)
  }

  /**
   * Runs the script and, in the same pipeline, one keyless command right after it (e.g.
   * `WAIT numreplicas timeout`): a Cluster client sends a pipeline to the node serving its keys,
   * so the follower runs on the node the script wrote to, on the same connection. On NOSCRIPT
   * both are sent once more with EVAL. On MOVED (a failover moved the slot; the script did not
   * run) a Cluster client refreshes its slot map and sends them once more: ioredis redirects a
   * pipeline only when every command failed alike, and the keyless follower does not fail.
   * Resolves with `[script reply, follower reply]`.
   * @throws {StoreUnavailableError} when either command (or the pipeline) fails, with the original as `cause`.
   * @throws {ScriptContractError} when `keys` does not hold `numberOfKeys` keys.
   */
  async runFollowedBy(
    client: RedisClient,
    keys: readonly string[],
    args: readonly (string | number | Buffer)[],
    follower: { name: string; args: readonly (string | number)[] },
  ): Promise<[unknown, unknown]> {
    if (this.numberOfKeys !== undefined && keys.length !== this.numberOfKeys) {
      throw new ScriptContractError(this.name, `expected ${this.numberOfKeys} keys, got ${keys.length}`)
    }
    const generation = this.generation
    const send = async (name: 'evalsha' | 'eval'): Promise<[unknown, unknown]> => {
      const argv = [name === 'evalsha' ? this.sha1 : this.source, keys.length, ...keys, ...args]
      const pipeline = client.pipeline() as unknown as CommandSender & {
        exec(): Promise<[Error | null, unknown][] | null>
      }
      pipeline.sendCommand(command(name, argv, client))
      pipeline.sendCommand(new Command(follower.name, [...follower.args], { replyEncoding: 'utf8' }))
      const [scriptResult, followerResult] = (await pipeline.exec()) ?? []
      if (!scriptResult || !followerResult) throw new Error('pipeline answered no result')
      if (scriptResult[0]) throw scriptResult[0]
      if (followerResult[0]) throw followerResult[0]
      return [scriptResult[1], followerResult[1]]
    }
    const attempt = () =>
      send('evalsha').catch((error: unknown) => {
        if (isNoScript(error))
          return this.recover(
            generation,
            () => send('evalsha'),
            () => send('eval'),
          )
        throw error
      })
    try {
      return await attempt().catch(async (error: unknown) => {
        if (!isCluster(client) || !isMoved(error)) throw error
        await new Promise<void>((resolve) => client.refreshSlotsCache(() => resolve()))
        return attempt()
      })
    } catch (error) {
      throw toStoreError(this.name, error)
    }
  }

  /**
   * Sends EVALSHA with a prebuilt argument list `[sha1, numberOfKeys, ...keys, ...args]`
   * (the caller guarantees the shape; rate limiters keep one per call site), falling back to
   * one EVAL of the source on NOSCRIPT. Resolves like {@link run}.
   * On a single-node client made with ioredis' `enableAutoPipelining`, the command goes through
   * the client's generated method, so commands of one event-loop tick share one write.
   * @throws {StoreUnavailableError} on any Redis or connection error, with the original as `cause`.
   */
  send(
    client: RedisClient,
    argv: (string | number | Buffer)[],
    replies: ReplyEncoding = 'utf8',
  ): Promise<unknown> {
    const generation = this.generation
    return sendScript(client, 'evalsha', argv, replies).then(undefined, (error: unknown) => {
      if (!isNoScript(error)) throw toStoreError(this.name, error)
      const evalArgv = argv.slice()
      evalArgv[0] = this.source
      return this.recover(
        generation,
        () => sendScript(client, 'evalsha', argv, replies),
        () => sendScript(client, 'eval', evalArgv, replies),
      ).then(undefined, (retryError: unknown) => {
        throw toStoreError(this.name, retryError)
      })
    })
  }

  /**
   * After NOSCRIPT on a command sent when `generation` reloads had started: if none started
   * since, this call reloads (`reload`, an EVAL) and the calls in flight wait for it; otherwise
   * it waits for that reload, then `retry`s (EVALSHA), reloading itself only on NOSCRIPT again.
   */
  private recover<T>(generation: number, retry: () => Promise<T>, reload: () => Promise<T>): Promise<T> {
    if (generation === this.generation) {
      this.generation++
      const reloaded = reload()
      this.reloading = reloaded.then(
        () => undefined,
        () => undefined,
      )
      return reloaded
    }
    return this.reloading.then(retry).catch((error: unknown) => {
      if (isNoScript(error)) return reload()
      throw error
    })
  }
}

/** What `Redis` and `Cluster` have in common for sending a prebuilt command. */
interface CommandSender {
  sendCommand(command: Command): Promise<unknown>
}

/** How a script's bulk-string replies are decoded: utf8 strings, or Buffers. */
export type ReplyEncoding = 'utf8' | 'buffer'

/** What a client's generated `evalsha` and `eval` methods (and their `…Buffer` twins) take. */
type ScriptMethods = Record<
  'evalsha' | 'eval' | 'evalshaBuffer' | 'evalBuffer',
  (...argv: (string | number | Buffer)[]) => Promise<unknown>
>

/**
 * Auto-pipelining applies only to the generated methods, so an auto-pipelined client gets them.
 * Cluster clients keep the prebuilt command: their per-node auto-pipelines are not tested here.
 */
function sendScript(
  client: RedisClient,
  name: 'evalsha' | 'eval',
  argv: (string | number | Buffer)[],
  replies: ReplyEncoding = 'utf8',
): Promise<unknown> {
  if (client.options.enableAutoPipelining === true && !isCluster(client)) {
    const method = replies === 'buffer' ? (`${name}Buffer` as const) : name
    return (client as unknown as ScriptMethods)[method](...argv)
  }
  return (client as CommandSender).sendCommand(command(name, argv, client, replies))
}

/** The Command the client's generated method would build: the client's key prefix; utf8 replies unless `buffer`. */
function command(
  name: 'evalsha' | 'eval',
  argv: (string | number | Buffer)[],
  client: RedisClient,
  replies: ReplyEncoding = 'utf8',
): Command {
  return new Command(name, argv, {
    replyEncoding: replies === 'buffer' ? null : 'utf8',
    keyPrefix: client.options.keyPrefix,
  })
}

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT')
}

function isMoved(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('MOVED ')
}

function toStoreError(script: string, error: unknown): StoreUnavailableError {
  if (error instanceof StoreUnavailableError) return error
  const message = error instanceof Error ? error.message : String(error)
  return new StoreUnavailableError(`Redis script ${script} failed: ${message}`, { cause: error })
}
