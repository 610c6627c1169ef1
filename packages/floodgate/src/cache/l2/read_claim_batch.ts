// node:timers' own: fake timers (vitest, Jest) replace the global one, which would hold every read
import { setImmediate } from 'node:timers'
import { isCluster, type RedisClient } from '../../redis/index.js'
import { type ReadClaim, readClaimReplies, readClaimScript } from '../scripts.js'

/** One L1 miss's read: its four keys (value, version, lock, waiters flag), its token and lock TTL (ms). */
export interface ReadClaimItem {
  readonly keys: readonly [string, string, string, string]
  readonly token: string
  readonly lockTtlMs: number
}

interface Pending extends ReadClaimItem {
  resolve(reply: ReadClaim): void
  reject(error: unknown): void
}

/**
 * Sends the read-claims (`read-claim-n.lua`) asked of one connection during one poll phase as one
 * call, as {@link GetBatcher} does with GETs: a batch leaves from `setImmediate`, or at once when
 * it holds `maxItems` items. On a cluster client, or with `maxItems` 1, each item is its own call
 * (an item's keys share one hash tag; a batch's would span slots).
 */
export class ReadClaimBatcher {
  private readonly pending = new Map<RedisClient, Pending[]>()
  private scheduled = false

  constructor(private readonly maxItems: number) {}

  /**
   * The value's bytes, or the claim taken (or found held) under `item.token`.
   * @throws (rejects with) the call's error, for every item of the batch.
   */
  claim(connection: RedisClient, item: ReadClaimItem): Promise<ReadClaim> {
    return new Promise((resolve, reject) => {
      const entry: Pending = { ...item, resolve, reject }
      if (this.maxItems === 1 || isCluster(connection)) {
        send(connection, [entry])
        return
      }
      let batch = this.pending.get(connection)
      if (batch === undefined) {
        batch = []
        this.pending.set(connection, batch)
        if (!this.scheduled) {
          this.scheduled = true
          setImmediate(this.sendPending)
        }
      }
      batch.push(entry)
      if (batch.length >= this.maxItems) {
        this.pending.delete(connection)
        send(connection, batch)
      }
    })
  }

  private readonly sendPending = (): void => {
    this.scheduled = false
    for (const [connection, batch] of this.pending) send(connection, batch)
    this.pending.clear()
  }
}

/** Sends `batch` as one call; never throws (a client that throws instead of rejecting fails the batch). */
function send(connection: RedisClient, batch: readonly Pending[]): void {
  const rejectAll = (error: unknown) => {
    for (const item of batch) item.reject(error)
  }
  const keys: string[] = []
  const args: (string | number)[] = []
  for (const item of batch) {
    keys.push(...item.keys)
    args.push(item.token, item.lockTtlMs)
  }
  try {
    readClaimScript.run(connection, keys, args, 'buffer').then((reply) => {
      let replies: ReadClaim[]
      try {
        replies = readClaimReplies(reply, batch.length)
      } catch (error) {
        rejectAll(error)
        return
      }
      for (const [i, item] of batch.entries()) item.resolve(replies[i]!)
    }, rejectAll)
  } catch (error) {
    rejectAll(error)
  }
}
