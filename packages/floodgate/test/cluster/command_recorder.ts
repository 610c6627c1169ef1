import { Cluster } from 'ioredis'
import { keySlot } from '../support/key_slot.js'

/** One command a cluster client sent. */
export interface RecordedCommand {
  name: string
  keys: string[]
  slots: number[]
  /** Set for commands sent inside a pipeline or MULTI: one id per `exec()`. */
  batch: number | undefined
  /** EVALSHA: the script's SHA1; EVAL: undefined. */
  sha1: string | undefined
  /** EVAL: the script source. */
  source: string | undefined
}

/** An error a command or a pipeline answered with. */
export interface RecordedError {
  name: string
  keys: string[]
  message: string
}

/** Messages that mean "these keys are not in one slot" (server or ioredis side). */
export const CROSS_SLOT_ERROR =
  /CROSSSLOT|same slot|slots allocation group|non local key|do not hash to the same slot/i

// biome-ignore lint/suspicious/noExplicitAny: ioredis' internal Command type is not exported
type SendCommand = (command: any, stream?: unknown, node?: unknown) => unknown

/**
 * Records every command every ioredis `Cluster` in this process sends (also
 * duplicates made by `duplicate()`, such as a stream consumer's blocking
 * connection), with the keys ioredis extracts and their slots, and every
 * error a command or a pipeline `exec()` answers with. Patches
 * `Cluster.prototype.sendCommand` and the pipeline prototype's `exec` until
 * {@link restore}. A test file is its own process (vitest `forks` pool), so
 * the patch never leaks into other files.
 */
export class CommandRecorder {
  readonly commands: RecordedCommand[] = []
  readonly errors: RecordedError[] = []
  private readonly batches = new WeakMap<object, number>()
  private nextBatch = 1
  private readonly restorers: (() => void)[] = []

  /** @param probe any cluster client, used once to find the pipeline prototype. */
  static install(probe: Cluster): CommandRecorder {
    const recorder = new CommandRecorder()
    recorder.patchSendCommand()
    recorder.patchExec(probe)
    return recorder
  }

  /** Removes the patches. */
  restore(): void {
    for (const undo of this.restorers.splice(0)) undo()
  }

  /** Commands grouped per pipeline/MULTI `exec()`. */
  batchesOf(): Map<number, RecordedCommand[]> {
    const byBatch = new Map<number, RecordedCommand[]>()
    for (const c of this.commands) {
      if (c.batch === undefined) continue
      const list = byBatch.get(c.batch) ?? []
      list.push(c)
      byBatch.set(c.batch, list)
    }
    return byBatch
  }

  private patchSendCommand(): void {
    const proto = Cluster.prototype as unknown as { sendCommand: SendCommand }
    const original = proto.sendCommand
    const recorder = this
    proto.sendCommand = function (this: Cluster, command, stream, node) {
      recorder.record(command, stream)
      return original.call(this, command, stream, node)
    }
    this.restorers.push(() => {
      proto.sendCommand = original
    })
  }

  private patchExec(probe: Cluster): void {
    const proto = Object.getPrototypeOf(probe.pipeline()) as { exec: (...args: unknown[]) => unknown }
    const original = proto.exec
    const recorder = this
    proto.exec = function (this: unknown, ...args: unknown[]) {
      const result: unknown = original.apply(this, args)
      // a MULTI's exec goes through here twice (ioredis wraps it); only promises are observed
      if (result instanceof Promise) {
        result.catch((error: unknown) =>
          recorder.errors.push({
            name: 'pipeline.exec',
            keys: [],
            message: String((error as Error)?.message),
          }),
        )
      }
      return result
    }
    this.restorers.push(() => {
      proto.exec = original
    })
  }

  // biome-ignore lint/suspicious/noExplicitAny: ioredis' internal Command type is not exported
  private record(command: any, stream: unknown): void {
    const name = String(command.name).toLowerCase()
    const keys = (command.getKeys() as (string | Buffer)[]).map((k) => k.toString())
    const isPipeline = typeof stream === 'object' && stream !== null && 'isPipeline' in stream
    const args = command.args as unknown[]
    this.commands.push({
      name,
      keys,
      slots: [...new Set(keys.map((k) => keySlot(k)))],
      batch: isPipeline ? this.batchId(stream) : undefined,
      sha1: name === 'evalsha' ? String(args[0]) : undefined,
      source: name === 'eval' ? String(args[0]) : undefined,
    })
    ;(command.promise as Promise<unknown>).catch((error: unknown) =>
      this.errors.push({ name, keys, message: String((error as Error)?.message) }),
    )
  }

  private batchId(stream: object): number {
    let id = this.batches.get(stream)
    if (id === undefined) {
      id = this.nextBatch++
      this.batches.set(stream, id)
    }
    return id
  }
}
