import { ScriptContractError } from '../errors/index.js'
import { SlotBatch } from '../rankings/slot_batch.js'
import type { RedisClient } from '../redis/types.js'
import type { SqlExecutor } from '../sql/executor.js'
import type { StreamEntry } from '../stream/types.js'
import type { InteractionKeys } from './keys.js'
import { stillPendingScript } from './scripts.js'

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

/** XPENDING page size of `still-pending-1.lua`. */
const PENDING_PAGE = 1000

/**
 * The entries of `entries` no longer pending in `group` (on any consumer): acknowledged by another
 * consumer or lost with Redis's data; a stream or group that no longer exists (NOGROUP) holds
 * none. One read-only script call per stream (`lua/still-pending-1.lua`, an XPENDING range scan
 * over the batch's ids), all pipelined; the entries stay with the consumer that read them.
 * @returns those entries (normally none).
 * @throws {StoreUnavailableError} when Redis fails (not for NOGROUP).
 */
export async function notPending(
  redis: RedisClient,
  group: string,
  entries: readonly StreamEntry[],
): Promise<Set<StreamEntry>> {
  const byStream = new Map<string, StreamEntry[]>()
  for (const e of entries) {
    const list = byStream.get(e.stream)
    if (list) list.push(e)
    else byStream.set(e.stream, [e])
  }
  const calls: { stream: string; list: StreamEntry[]; args: string[] }[] = []
  for (const [stream, list] of byStream) {
    let min = list[0]!.id
    let max = min
    for (const e of list) {
      if (idBefore(e.id, min)) min = e.id
      if (idBefore(max, e.id)) max = e.id
    }
    calls.push({ stream, list, args: [group, min, max, String(PENDING_PAGE), ...list.map((e) => e.id)] })
  }
  const replies = await stillPendingEach(redis, calls)
  const gone = new Set<StreamEntry>()
  replies.forEach((reply, i) => {
    if (!Array.isArray(reply)) throw new ScriptContractError(stillPendingScript.name, reply)
    if (reply.length === 0) return
    const ids = new Set(reply.map(String))
    for (const e of calls[i]!.list) if (ids.has(e.id)) gone.add(e)
  })
  return gone
}

/**
 * One `still-pending-1.lua` call per stream, all in one pipeline ({@link SlotBatch}: one per node
 * on Redis Cluster), so a batch over hundreds of partitions costs one socket write; EVALSHA, then
 * once more with EVAL (which also caches the script) when the node has lost its script cache.
 */
async function stillPendingEach(
  redis: RedisClient,
  calls: readonly { stream: string; args: readonly string[] }[],
): Promise<unknown[]> {
  const send = (script: string, how: 'evalsha' | 'eval') => {
    const batch = new SlotBatch(redis)
    for (const { stream, args } of calls) batch.add(stream, (pipe) => pipe[how](script, 1, stream, ...args))
    return batch.exec(`Redis script ${stillPendingScript.name}`)
  }
  try {
    return await send(stillPendingScript.sha1, 'evalsha')
  } catch (error) {
    if (!String((error as Error).message).includes('NOSCRIPT')) throw error
    return send(stillPendingScript.source, 'eval')
  }
}

/**
 * Whether stream id `a` (`<ms>-<seq>`, canonical decimals as Redis writes them) is older than `b`:
 * by length, then text, per part. No BigInt: it runs twice per entry of every batch.
 */
function idBefore(a: string, b: string): boolean {
  const da = a.indexOf('-')
  const db = b.indexOf('-')
  if (da !== db) return da < db
  const ms = a.slice(0, da)
  const otherMs = b.slice(0, db)
  if (ms !== otherMs) return ms < otherMs
  const seq = a.slice(da + 1)
  const otherSeq = b.slice(db + 1)
  return seq.length !== otherSeq.length ? seq.length < otherSeq.length : seq < otherSeq
}
