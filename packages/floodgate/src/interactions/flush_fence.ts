import type { RedisClient } from '../redis/types.js'
import type { SqlExecutor } from '../sql/executor.js'
import type { StreamEntry } from '../stream/types.js'
import type { InteractionKeys } from './keys.js'

// The fence between the flush and a recovery from a Redis loss (see ../counters/README.md, "The
// flush across a loss"): a batch read before the loss commits before the recovery reads
// PostgreSQL, or not at all. One advisory lock per key prefix, hashed by `hashtextextended`.
function fenceName(keys: InteractionKeys): string {
  return `floodgate:flush-fence:${keys.epoch()}`
}

/** Takes the fence's shared lock for the rest of the flush transaction `tx`. */
export async function holdFlushFence(tx: SqlExecutor, keys: InteractionKeys): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))', [fenceName(keys)])
}

/**
 * Waits until no flush transaction holds the fence (one statement, its own transaction: the
 * exclusive lock is released as soon as it is granted). Call it after learning of a loss and
 * before reading PostgreSQL to restore Redis.
 */
export async function awaitFlushesInFlight(sql: SqlExecutor, keys: InteractionKeys): Promise<void> {
  await sql.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [fenceName(keys)])
}

/**
 * The entries of `entries` still pending in `group` (on any consumer), made this consumer's:
 * `XCLAIM … 0 <ids> JUSTID` per stream (JUSTID leaves delivery counts alone). An entry that
 * is not pending was acknowledged by another consumer or lost with Redis's data; a stream or
 * group that no longer exists (NOGROUP) holds none.
 * @returns `stream id` keys of the pending entries (`${stream} ${id}`).
 * @throws the Redis client's error for anything but NOGROUP.
 */
export async function stillPending(
  redis: RedisClient,
  group: string,
  consumer: string,
  entries: readonly StreamEntry[],
): Promise<Set<string>> {
  const byStream = new Map<string, string[]>()
  for (const e of entries) {
    const ids = byStream.get(e.stream)
    if (ids) ids.push(e.id)
    else byStream.set(e.stream, [e.id])
  }
  const pending = new Set<string>()
  await Promise.all(
    [...byStream].map(async ([stream, ids]) => {
      const claimed = await redis
        .call('XCLAIM', stream, group, consumer, 0, ...ids, 'JUSTID')
        .catch((error: unknown) => {
          if (error instanceof Error && error.message.startsWith('NOGROUP')) return []
          throw error
        })
      if (Array.isArray(claimed)) for (const id of claimed) pending.add(`${stream} ${String(id)}`)
    }),
  )
  return pending
}
