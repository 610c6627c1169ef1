// node:timers' own: fake timers (vitest, Jest) replace the global one, which would hold every call
import { setImmediate } from 'node:timers'
import { type Deadline, watchDeadline } from '../deadline/index.js'
import { ScriptContractError } from '../errors/index.js'
import type { LuaScript } from '../redis/lua_script.js'
import { isCluster, type RedisClient } from '../redis/types.js'

/**
 * One item of a batch (a decision, a lease call). Exactly one method is called, once; neither may
 * throw (the other items of the batch are answered from the same callback).
 */
export interface BatchItem {
  /** The batch answered: this item's integers are `reply[at]` to `reply[at + width - 1]`. */
  answered(reply: readonly number[], at: number): void
  /**
   * The batch failed: StoreUnavailableError (a Redis or connection error, or RedisTimeoutError past
   * the deadline), or ScriptContractError (the reply broke the script's contract).
   */
  failed(error: unknown): void
  /**
   * With `lateOutcomes`: the batch failed (`failed` was called) but its call answered later;
   * this item's integers are `reply[at]` to `reply[at + width - 1]`.
   */
  answeredLate?(reply: readonly number[], at: number): void
  /** With `lateOutcomes`: the batch failed and no valid reply will ever come (the call failed too). */
  lost?(): void
}

/** What {@link ScriptBatcher} sends; units: ms for the deadline. */
export interface ScriptBatchOptions {
  client: RedisClient
  /**
   * A `-n.lua` script taking each item's keys in turn as KEYS, then ARGV = `shared` followed by
   * each item's arguments in turn, and replying `head` integers shared by the batch, then `width`
   * integers per item, in order.
   */
  script: LuaScript
  /** An item's keys: its hash-tagged limiter key followed by each suffix (e.g. `[':fw']`). */
  suffixes: readonly string[]
  /** The batch's leading ARGV (the policy's numbers, stringified once). */
  shared: readonly string[]
  head: number
  width: number
  /** Most items of one batch; a full batch leaves at once. 1: every item is its own call. */
  maxItems: number
  /**
   * Watches each batch under this deadline (one entry per batch, see `watchDeadline`); without it,
   * items see the call's own outcome, however late.
   */
  deadline?: Deadline
  /** Names the caller in timeout errors. */
  what: string
  /**
   * After a failed batch, tell its items the call's own outcome once known (`answeredLate` or
   * `lost`): a script that reserved something must be undone even when its reply came too late.
   */
  lateOutcomes?: boolean
}

class Batch {
  readonly keys: string[] = []
  readonly args: (string | number)[] = []
  readonly items: BatchItem[] = []
}

/**
 * Sends the script calls one process asks for during one event-loop poll phase as one script call
 * (GetBatcher's batching, `cache/l2/get_batch.ts`, applied to a script that decides many keys):
 * one command to build, one socket write, one reply to parse and one deadline entry per batch
 * instead of per item, and one Redis TIME and script dispatch on the server. A batch leaves from
 * `setImmediate`, so the items added while the requests of one poll phase are handled join it, or at
 * once when it holds `maxItems` items ({@link flush} sends the open ones now). Items run in the
 * order they were added; a sent batch is never joined. On a single node one batch is open at a time;
 * on a Cluster each limiter key (hash tag) has its own, so a script call never spans slots.
 */
export class ScriptBatcher {
  private readonly o: ScriptBatchOptions
  /** The open batch of a single-node client. */
  private open: Batch | undefined
  /** The open batches of a Cluster client, per hash-tagged limiter key; undefined on a single node. */
  private readonly byTag: Map<string, Batch> | undefined
  private scheduled = false

  constructor(options: ScriptBatchOptions) {
    this.o = options
    this.byTag = isCluster(options.client) ? new Map() : undefined
  }

  /**
   * Adds an item: its keys are `tagged` + each suffix, its arguments `args`; `item` hears the
   * outcome once the batch has answered.
   */
  add(tagged: string, args: readonly (string | number)[], item: BatchItem): void {
    const { suffixes, maxItems } = this.o
    let batch: Batch | undefined
    if (this.byTag === undefined) {
      batch = this.open
      if (batch === undefined) {
        batch = new Batch()
        this.open = batch
      }
    } else {
      batch = this.byTag.get(tagged)
      if (batch === undefined) {
        batch = new Batch()
        this.byTag.set(tagged, batch)
      }
    }
    for (const suffix of suffixes) batch.keys.push(tagged + suffix)
    for (const arg of args) batch.args.push(arg)
    batch.items.push(item)
    if (batch.items.length >= maxItems) {
      if (this.byTag === undefined) this.open = undefined
      else this.byTag.delete(tagged)
      this.send(batch)
    } else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.sendPending)
    }
  }

  /** Sends every open batch now (before a command that must run after the items added so far). */
  flush(): void {
    const open = this.open
    if (open !== undefined) {
      this.open = undefined
      this.send(open)
    }
    if (this.byTag !== undefined && this.byTag.size > 0) {
      const batches = [...this.byTag.values()]
      this.byTag.clear()
      for (const batch of batches) this.send(batch)
    }
  }

  private readonly sendPending = (): void => {
    this.scheduled = false
    this.flush()
  }

  /** Sends `batch` and routes its outcome to its items; never throws. */
  private send(batch: Batch): void {
    const { client, script, shared, deadline, what } = this.o
    const argv: (string | number)[] = [script.sha1, batch.keys.length]
    for (const key of batch.keys) argv.push(key)
    for (const arg of shared) argv.push(arg)
    for (const arg of batch.args) argv.push(arg)
    let call: Promise<unknown>
    try {
      call = script.send(client, argv)
    } catch (error) {
      // a client that throws instead of rejecting must not leave the batch's items waiting
      call = Promise.reject(error)
    }
    const answered = (reply: unknown) => this.answer(batch, reply)
    const failed = (error: unknown) => {
      for (const item of batch.items) item.failed(error)
      // the call is still out past the deadline, or already failed (then `lost` follows at once)
      if (this.o.lateOutcomes)
        call.then(
          (reply) => this.answerLate(batch, reply),
          () => lostAll(batch),
        )
    }
    if (deadline === undefined) call.then(answered, failed)
    else watchDeadline(call, deadline, what, answered, failed)
  }

  private answer(batch: Batch, reply: unknown): void {
    const { head, width, script } = this.o
    const { items } = batch
    if (!this.valid(batch, reply)) {
      const error = new ScriptContractError(script.name, reply)
      for (const item of items) item.failed(error)
      if (this.o.lateOutcomes) lostAll(batch)
      return
    }
    for (let i = 0; i < items.length; i++) items[i]!.answered(reply as number[], head + i * width)
  }

  /** The reply of a batch whose items were already failed. */
  private answerLate(batch: Batch, reply: unknown): void {
    if (!this.valid(batch, reply)) {
      lostAll(batch)
      return
    }
    const { head, width } = this.o
    const { items } = batch
    for (let i = 0; i < items.length; i++) items[i]!.answeredLate?.(reply as number[], head + i * width)
  }

  private valid(batch: Batch, reply: unknown): reply is number[] {
    const { head, width } = this.o
    return Array.isArray(reply) && reply.length === head + width * batch.items.length && reply.every(isNumber)
  }
}

function lostAll(batch: Batch): void {
  for (const item of batch.items) item.lost?.()
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number'
}
