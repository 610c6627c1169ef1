// node:timers' own: fake timers (vitest, Jest) replace the global one, which would hold every call
import { setImmediate } from 'node:timers'
import { ScriptContractError, StoreUnavailableError } from '../errors/index.js'
import type { LuaScript } from '../redis/lua_script.js'
import { type InteractionReply, interactionReply } from './scripts.js'

/** Runs one script call: EVALSHA on the caller's client, or through `ReplicatedWrites` (then WAIT). */
export type RunScript = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | number)[],
) => Promise<unknown>

/** Keys and arguments: the partition's shared ones (a batch's leading KEYS and ARGV), or one unit's. */
export interface BatchPart {
  keys: readonly string[]
  args: readonly (string | number)[]
}

/** What several events of a batch share (an item and kind): sent once per batch, named by `id`. */
export interface BatchUnit {
  id: string
  /** Its keys and arguments, built only when the unit first joins a batch. */
  part(): BatchPart
}

interface Waiting {
  resolve(reply: InteractionReply): void
  reject(error: Error): void
}

class Batch {
  readonly keys: string[]
  /** The head's arguments, then each unit's. */
  readonly args: (string | number)[]
  readonly events: (string | number)[] = []
  /** Unit id → its number (1, 2, … in the order units joined). */
  readonly units = new Map<string, number>()
  readonly waiting: Waiting[] = []
  constructor(head: BatchPart) {
    this.keys = [...head.keys]
    this.args = [...head.args]
  }
}

/**
 * Sends the events (toggles or plays) one process asks for during one event-loop poll phase as
 * one script call per partition (ScriptBatcher's batching, `ratelimit/script_batch.ts`, whose
 * replies are integers only and whose keys are one limiter's: here the events of one item and
 * kind share a unit, its keys and arguments sent once, and each answers `{ changed, count, event
 * id }`). A batch
 * leaves from `setImmediate`, or at once when it holds `maxEvents`; a sent batch is never joined,
 * so the events of one partition run in the order they were added. Every key of a batch carries
 * its partition's hash tag: one slot, safe on Redis Cluster.
 */
export class EventBatcher {
  private readonly open = new Map<number, Batch>()
  private scheduled = false

  /**
   * @param script a `-n.lua` script taking KEYS = the head's keys, then each unit's; ARGV = the
   *   head's arguments, each unit's, then each event's (naming its unit by number), answering 3
   *   values per event in order (`toggle-batch-n.lua`, `play-batch-n.lua`).
   * @param maxEvents most events of one call.
   */
  constructor(
    private readonly script: LuaScript,
    private readonly run: RunScript,
    private readonly maxEvents: number,
  ) {}

  /**
   * Adds one event of partition `p`: `head` builds the partition's shared part (called when this
   * event opens the batch), `unit` the part it shares with other events (sent once per batch), `event`
   * its own arguments given its unit's number. Resolves with its own answer.
   * @throws (rejects with) the batch's error for each of its events: StoreUnavailableError,
   *   ReplicationTimeoutError (through `run`), ScriptContractError on a reply off the contract.
   */
  add(
    p: number,
    head: () => BatchPart,
    unit: BatchUnit,
    event: (unit: number) => readonly (string | number)[],
  ): Promise<InteractionReply> {
    let batch = this.open.get(p)
    if (batch === undefined) {
      batch = new Batch(head())
      this.open.set(p, batch)
    }
    let number = batch.units.get(unit.id)
    if (number === undefined) {
      number = batch.units.size + 1
      batch.units.set(unit.id, number)
      const part = unit.part()
      for (const key of part.keys) batch.keys.push(key)
      for (const arg of part.args) batch.args.push(arg)
    }
    for (const arg of event(number)) batch.events.push(arg)
    const opened = batch
    const answer = new Promise<InteractionReply>((resolve, reject) =>
      opened.waiting.push({ resolve, reject }),
    )
    if (batch.waiting.length >= this.maxEvents) {
      this.open.delete(p)
      this.send(batch)
    } else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.sendPending)
    }
    return answer
  }

  private readonly sendPending = (): void => {
    this.scheduled = false
    const batches = [...this.open.values()]
    this.open.clear()
    for (const batch of batches) this.send(batch)
  }

  /** Sends `batch` and answers each of its events; never throws. */
  private send(batch: Batch): void {
    let call: Promise<unknown>
    try {
      call = this.run(this.script, batch.keys, [...batch.args, ...batch.events])
    } catch (error) {
      call = Promise.reject(error) // a client that throws instead of rejecting
    }
    call.then(
      (reply) => this.answer(batch, reply),
      (error: unknown) => {
        const failure = asError(this.script.name, error)
        for (const w of batch.waiting) w.reject(failure)
      },
    )
  }

  private answer(batch: Batch, reply: unknown): void {
    const { waiting } = batch
    let answers: InteractionReply[]
    try {
      if (!Array.isArray(reply) || reply.length !== 3 * waiting.length)
        throw new ScriptContractError(this.script.name, reply)
      answers = waiting.map((_, i) => interactionReply(this.script, reply.slice(3 * i, 3 * i + 3)))
    } catch (error) {
      for (const w of waiting) w.reject(asError(this.script.name, error))
      return
    }
    for (let i = 0; i < waiting.length; i++) waiting[i]!.resolve(answers[i]!)
  }
}

/** The error each event of a failed batch gets: an Error as it came, anything else wrapped. */
function asError(script: string, error: unknown): Error {
  if (error instanceof Error) return error
  return new StoreUnavailableError(`Redis script ${script} failed: ${String(error)}`, { cause: error })
}
