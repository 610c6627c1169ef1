// node:timers' own: fake timers (vitest, Jest) replace the global one, which would hold every read
import { setImmediate } from 'node:timers'
import type { Redis } from 'ioredis'

interface Reply {
  readonly promise: Promise<Buffer | null>
  resolve(value: Buffer | null): void
  reject(error: unknown): void
}

/**
 * Sends the single-key GETs asked of one connection during one poll phase as one `MGET`
 * (DataLoader's batching, applied to commands: ioredis' auto-pipelining and node-redis batch the
 * socket writes, but still send, parse and settle one command per key). A batch leaves from
 * `setImmediate`, so the reads started by every request handled in the same poll phase join it,
 * or at once when it holds `maxKeys` keys; a key asked twice in one unsent batch is read once, and
 * a batch of one key is a plain `GET`. A sent batch is never joined: a read started after a write
 * this process sent is sent after it, and commands on one connection run in order. Single node
 * connections only (an `MGET` must not span hash slots).
 */
export class GetBatcher {
  private readonly pending = new Map<Redis, Map<string, Reply>>()
  private scheduled = false

  /** @param maxKeys most keys of one batch; 1 sends every read as its own GET. */
  constructor(private readonly maxKeys: number) {}

  /**
   * The value of `key` as bytes, null when absent.
   * @throws (rejects with) the command's error, for every read of the batch.
   */
  get(connection: Redis, key: string): Promise<Buffer | null> {
    if (this.maxKeys === 1) return connection.getBuffer(key)
    let batch = this.pending.get(connection)
    if (batch === undefined) {
      batch = new Map()
      this.pending.set(connection, batch)
      if (!this.scheduled) {
        this.scheduled = true
        setImmediate(this.sendPending)
      }
    }
    const joined = batch.get(key)
    if (joined !== undefined) return joined.promise
    const reply = newReply()
    batch.set(key, reply)
    if (batch.size >= this.maxKeys) {
      this.pending.delete(connection)
      send(connection, batch)
    }
    return reply.promise
  }

  private readonly sendPending = (): void => {
    this.scheduled = false
    for (const [connection, batch] of this.pending) send(connection, batch)
    this.pending.clear()
  }
}

/** Sends `batch`; never throws (a client that throws instead of rejecting fails the batch's reads). */
function send(connection: Redis, batch: Map<string, Reply>): void {
  const rejectAll = (error: unknown) => {
    for (const reply of batch.values()) reply.reject(error)
  }
  try {
    if (batch.size === 1) {
      for (const [key, reply] of batch) connection.getBuffer(key).then(reply.resolve, reply.reject)
      return
    }
    connection.mgetBuffer([...batch.keys()]).then((values) => {
      let i = 0
      // a Map iterates in insertion order: the order of the MGET's keys
      for (const reply of batch.values()) reply.resolve(values[i++] ?? null)
    }, rejectAll)
  } catch (error) {
    rejectAll(error)
  }
}

function newReply(): Reply {
  let resolve!: (value: Buffer | null) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<Buffer | null>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}
