import type { RedisClient } from '../redis/types.js'
import { readGroupEach, readGroupEachCompact, releaseEntries } from './group_commands.js'
import type { StreamEntry, StreamSource } from './types.js'

/**
 * Non-blocking XREADGROUP rounds spread over `sources` until `batchSize` entries are read or
 * every stream is empty: each round asks every stream that filled its share in the round before
 * (one round trip per round, see {@link readGroupEach}); with `compact`, through
 * {@link readGroupEachCompact}.
 * @throws the Redis error of a failed read.
 */
export async function readNewEntries(
  redis: RedisClient,
  group: string,
  consumer: string,
  sources: readonly StreamSource[],
  options: { batchSize: number; compact: boolean },
): Promise<StreamEntry[]> {
  const { batchSize } = options
  const read = options.compact ? readGroupEachCompact : readGroupEach
  const batch: StreamEntry[] = []
  let candidates: readonly StreamSource[] = sources
  while (candidates.length > 0 && batch.length < batchSize) {
    const count = Math.max(1, Math.ceil((batchSize - batch.length) / candidates.length))
    const replies = await read(
      redis,
      group,
      consumer,
      candidates.map((s) => s.stream),
      count,
    )
    const full: StreamSource[] = []
    replies.forEach((entries, i) => {
      batch.push(...entries)
      if (entries.length === count) full.push(candidates[i]!)
    })
    candidates = full
  }
  return batch
}

/**
 * At most one batch read ahead while the batch before it is applied, so the consumer's CPU (the
 * read and its reply decoding) and the database's overlap instead of adding up. Its entries are
 * pending to this consumer from the read on, like any batch in progress: a crash leaves them to
 * XAUTOCLAIM after the claim idle time; {@link release} hands them back at once.
 */
export class ReadAhead {
  private next: Promise<StreamEntry[]> | undefined

  /** Starts `read` unless a batch is already read ahead (the bound: one). */
  start(read: () => Promise<StreamEntry[]>): void {
    if (this.next !== undefined) return
    const next = read()
    // a failed read ahead surfaces in take(); until then it must not count as unhandled
    next.catch(() => undefined)
    this.next = next
  }

  /**
   * The batch read ahead (awaited), or undefined when none was started.
   * @throws the Redis error of the read ahead.
   */
  async take(): Promise<StreamEntry[] | undefined> {
    const next = this.next
    this.next = undefined
    return next
  }

  /**
   * `entries` without those of the batch read ahead (awaited; a failed read ahead holds none): a
   * claim round that takes back this consumer's own read-ahead entries (idle for `claimIdleMs`
   * while an apply was stuck) leaves them to be applied once, from the read ahead.
   */
  async without(entries: StreamEntry[]): Promise<StreamEntry[]> {
    if (this.next === undefined || entries.length === 0) return entries
    const held = await this.next.catch(() => [])
    if (held.length === 0) return entries
    const ids = new Set(held.map((e) => `${e.stream}\n${e.id}`))
    return entries.filter((e) => !ids.has(`${e.stream}\n${e.id}`))
  }

  /**
   * Waits for a read ahead still in flight and forgets its batch: for when the consumer's own
   * pending entries are re-read from the start, which includes it. Waiting matters: a read still
   * in flight could deliver entries after that re-read passed them.
   */
  async discard(): Promise<void> {
    await this.take().catch(() => undefined)
  }

  /**
   * On stop: hands a batch read ahead and not applied back to the group, so any consumer's next
   * XAUTOCLAIM round takes it instead of waiting `claimIdleMs` (see {@link releaseEntries}).
   * @returns how many entries it released; 0 when none, or when Redis failed (they then wait
   *   `claimIdleMs`, as after a crash).
   */
  async release(redis: RedisClient, group: string, consumer: string, claimIdleMs: number): Promise<number> {
    const entries = await this.take().catch(() => undefined)
    if (entries === undefined || entries.length === 0) return 0
    try {
      await releaseEntries(redis, group, consumer, entries, claimIdleMs)
      return entries.length
    } catch {
      return 0
    }
  }
}
