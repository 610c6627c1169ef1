import { SlotBatch } from '../rankings/slot_batch.js'
import { isCluster, type RedisClient } from '../redis/types.js'
import { parseAutoClaimReply, parseCompactRead, parseDeliveryCount, parseReadReply } from './replies.js'
import {
  deadLetterReply,
  deadLetterScript,
  membersReply,
  membersScript,
  readCompactScript,
} from './scripts.js'
import type { StreamEntry, StreamSource } from './types.js'

// The Redis commands a StreamGroupConsumer sends, one function each, replies parsed.

/** Creates `group` on every stream (at id 0, with MKSTREAM) where it is missing. */
export async function createGroups(
  redis: RedisClient,
  sources: readonly StreamSource[],
  group: string,
): Promise<void> {
  await Promise.all(
    sources.map((s) =>
      redis.call('XGROUP', 'CREATE', s.stream, group, '0', 'MKSTREAM').catch((error) => {
        if (!String((error as Error).message).startsWith('BUSYGROUP')) throw error
      }),
    ),
  )
}

/** XREADGROUP of up to `count` new entries per stream; `blockMs` set = a blocking read (ms). */
export async function readGroup(
  redis: RedisClient,
  group: string,
  consumer: string,
  streams: readonly string[],
  count: number,
  blockMs: number | undefined,
): Promise<StreamEntry[]> {
  const args: (string | number)[] = ['GROUP', group, consumer, 'COUNT', count]
  if (blockMs !== undefined) args.push('BLOCK', blockMs)
  args.push('STREAMS', ...streams, ...streams.map(() => '>'))
  return parseReadReply(await redis.call('XREADGROUP', ...args))
}

/**
 * Non-blocking XREADGROUP of up to `count` new entries from each of `streams`; the entries of
 * stream `i` at index `i`. On a single node ONE command names every stream; on Redis Cluster,
 * where one command may not name streams in different slots, one command per stream, sent as one
 * pipeline per node ({@link SlotBatch}): one round trip either way, never one per stream.
 * @throws the Redis error of a failed read (on a cluster: a StoreUnavailableError wrapping it).
 */
export async function readGroupEach(
  redis: RedisClient,
  group: string,
  consumer: string,
  streams: readonly string[],
  count: number,
): Promise<StreamEntry[][]> {
  const byStream = new Map<string, StreamEntry[]>(streams.map((s) => [s, []]))
  if (!isCluster(redis)) {
    for (const entry of await readGroup(redis, group, consumer, streams, count, undefined)) {
      byStream.get(entry.stream)?.push(entry)
    }
    return streams.map((s) => byStream.get(s) ?? [])
  }
  const batch = new SlotBatch(redis)
  for (const stream of streams) {
    batch.add(stream, (pipe) =>
      pipe.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', count, 'STREAMS', stream, '>'),
    )
  }
  const replies = await batch.exec('stream group read')
  return replies.map(parseReadReply)
}

/**
 * {@link readGroupEach} through `read-compact-1.lua`: one script call per stream, all in one
 * pipeline ({@link SlotBatch}: one per node on Redis Cluster), each entry coming back as one
 * string, so the client decodes one reply item per entry instead of 2 + 2 per field. The script
 * is loaded on every stream's node first (once per client), and again after NOSCRIPT (a node lost
 * its script cache), which then still throws rather than read again: other calls of the pipeline
 * may have delivered entries, which the consumer's re-read of its own pending entries (after any
 * read error) picks up.
 * @throws {StoreUnavailableError} wrapping the Redis error of a failed read.
 */
export async function readGroupEachCompact(
  redis: RedisClient,
  group: string,
  consumer: string,
  streams: readonly string[],
  count: number,
): Promise<StreamEntry[][]> {
  if (!compactReadLoaded.has(redis)) {
    await loadCompactRead(redis, streams)
    compactReadLoaded.add(redis)
  }
  const batch = new SlotBatch(redis)
  for (const stream of streams) {
    batch.add(stream, (pipe) => pipe.evalsha(readCompactScript.sha1, 1, stream, group, consumer, count))
  }
  try {
    const replies = await batch.exec(`Redis script ${readCompactScript.name}`)
    return replies.map((reply, i) => parseCompactRead(streams[i]!, reply))
  } catch (error) {
    if (String((error as Error).message).includes('NOSCRIPT')) await loadCompactRead(redis, streams)
    throw error
  }
}

/** Clients that loaded `read-compact-1.lua` on their streams' nodes. */
const compactReadLoaded = new WeakSet<RedisClient>()

/** SCRIPT LOAD of `read-compact-1.lua` on the node of every one of `streams` (one pipeline per node). */
async function loadCompactRead(redis: RedisClient, streams: readonly string[]): Promise<void> {
  const load = new SlotBatch(redis)
  for (const stream of streams) load.add(stream, (pipe) => pipe.script('LOAD', readCompactScript.source))
  await load.exec(`Redis script ${readCompactScript.name} load`)
}

/**
 * XREADGROUP of up to `count` of `consumer`'s own pending entries on `stream` with ids above
 * `afterId` (`0` = from the start): what was delivered to it and not acknowledged. Also answers
 * how many items the page held (entries whose body was deleted are counted, not returned) and
 * the last id, to page on.
 */
export async function readOwnPending(
  redis: RedisClient,
  group: string,
  consumer: string,
  stream: string,
  count: number,
  afterId: string,
): Promise<{ entries: StreamEntry[]; items: number; lastId: string | undefined }> {
  const reply = await redis.call(
    'XREADGROUP',
    'GROUP',
    group,
    consumer,
    'COUNT',
    count,
    'STREAMS',
    stream,
    afterId,
  )
  const items = pendingItems(reply)
  const last = items[items.length - 1]
  return {
    entries: parseReadReply(reply),
    items: items.length,
    lastId: Array.isArray(last) && typeof last[0] === 'string' ? last[0] : undefined,
  }
}

/** The `[id, fields | nil]` items of a one-stream XREADGROUP reply (RESP2 or RESP3 shape). */
function pendingItems(reply: unknown): unknown[] {
  if (!Array.isArray(reply)) return []
  const items = typeof reply[0] === 'string' ? reply[1] : (reply[0] as unknown[] | undefined)?.[1]
  return Array.isArray(items) ? items : []
}

/** One XAUTOCLAIM page of entries idle for `idleMs` (ms) on any consumer, from `cursor`. */
async function autoClaim(
  redis: RedisClient,
  stream: string,
  group: string,
  consumer: string,
  options: { idleMs: number; cursor: string; count: number },
): Promise<{ cursor: string; entries: StreamEntry[]; deleted: number }> {
  const reply = await redis.call(
    'XAUTOCLAIM',
    stream,
    group,
    consumer,
    options.idleMs,
    options.cursor,
    'COUNT',
    options.count,
  )
  return parseAutoClaimReply(stream, reply)
}

/**
 * One XAUTOCLAIM page on every stream at once, each resuming from its cursor in `cursors` (updated
 * in place; `0-0` for a stream not in it): the entries idle for `idleMs` (ms) on any consumer, and
 * how many pending ids had lost their entry (dropped from the PEL by Redis 7).
 */
export async function autoClaimRound(
  redis: RedisClient,
  sources: readonly StreamSource[],
  group: string,
  consumer: string,
  options: { cursors: Map<string, string>; idleMs: number; count: number },
): Promise<{ entries: StreamEntry[]; deleted: number }> {
  const replies = await Promise.all(
    sources.map(async (s) => {
      const parsed = await autoClaim(redis, s.stream, group, consumer, {
        idleMs: options.idleMs,
        cursor: options.cursors.get(s.stream) ?? '0-0',
        count: options.count,
      })
      options.cursors.set(s.stream, parsed.cursor)
      return parsed
    }),
  )
  return {
    entries: replies.flatMap((r) => r.entries),
    deleted: replies.reduce((sum, r) => sum + r.deleted, 0),
  }
}

/**
 * XACK per stream, all sent as one pipeline ({@link SlotBatch}: one per node on Redis Cluster):
 * a batch spread over hundreds of partitions costs one socket write, not one per stream.
 * @throws {StoreUnavailableError} wrapping the Redis error of a failed XACK.
 */
export async function ackEntries(
  redis: RedisClient,
  group: string,
  entries: readonly StreamEntry[],
): Promise<void> {
  const batch = new SlotBatch(redis)
  for (const [stream, ids] of idsByStream(entries))
    batch.add(stream, (pipe) => pipe.xack(stream, group, ...ids))
  await batch.exec('stream group ack')
}

/**
 * Makes `entries`, pending to `consumer`, claimable at once: `XCLAIM … IDLE idleMs JUSTID` to the
 * same consumer sets their idle time (ms) to `idleMs` (the group's `claimIdleMs`) without counting
 * a delivery, so the next XAUTOCLAIM round of any consumer takes them. Entries no longer pending
 * are skipped by Redis. One pipeline ({@link SlotBatch}: one per node on Redis Cluster).
 * @throws {StoreUnavailableError} wrapping the Redis error of a failed XCLAIM.
 */
export async function releaseEntries(
  redis: RedisClient,
  group: string,
  consumer: string,
  entries: readonly StreamEntry[],
  idleMs: number,
): Promise<void> {
  const batch = new SlotBatch(redis)
  for (const [stream, ids] of idsByStream(entries)) {
    batch.add(stream, (pipe) =>
      pipe.call('XCLAIM', stream, group, consumer, 0, ...ids, 'IDLE', idleMs, 'JUSTID'),
    )
  }
  await batch.exec('stream group release')
}

function idsByStream(entries: readonly StreamEntry[]): Map<string, string[]> {
  const byStream = new Map<string, string[]>()
  for (const e of entries) {
    const ids = byStream.get(e.stream)
    if (ids) ids.push(e.id)
    else byStream.set(e.stream, [e.id])
  }
  return byStream
}

/** How often `entry` was delivered (XPENDING); 0 when it is not pending. */
async function deliveryCount(redis: RedisClient, group: string, entry: StreamEntry): Promise<number> {
  return parseDeliveryCount(await redis.call('XPENDING', entry.stream, group, entry.id, entry.id, 1))
}

/**
 * Moves a pending entry to its source's dead-letter stream with why and by whom, acknowledging it
 * in the same script (`dead-letter-2.lua`): `moved`, or `notPending` when it no longer was.
 */
async function deadLetter(
  redis: RedisClient,
  source: StreamSource,
  group: string,
  entry: StreamEntry,
  failure: { error: unknown; deliveries: number; consumer: string },
): Promise<'moved' | 'notPending'> {
  const reply = await deadLetterScript.run(
    redis,
    [source.stream, source.deadLetter],
    [group, entry.id, describe(failure.error), failure.deliveries, failure.consumer],
  )
  return deadLetterReply(reply)
}

/**
 * A poison entry (its handler failed on it alone): `rejected` while it was delivered fewer than
 * `maxDeliveries` times (it stays pending for another delivery), else moved to its source's
 * dead-letter stream (`dead-lettered`); `gone` when it was no longer pending or its stream is not
 * one of `sources`.
 * @throws the Redis error of the XPENDING or the script.
 */
export async function rejectEntry(
  redis: RedisClient,
  sources: readonly StreamSource[],
  group: string,
  consumer: string,
  failure: { entry: StreamEntry; error: unknown; maxDeliveries: number },
): Promise<{ outcome: 'rejected' | 'dead-lettered' | 'gone'; deliveries: number }> {
  const { entry, error, maxDeliveries } = failure
  const deliveries = await deliveryCount(redis, group, entry)
  if (deliveries < maxDeliveries) return { outcome: 'rejected', deliveries }
  const source = sources.find((s) => s.stream === entry.stream)
  if (!source) return { outcome: 'gone', deliveries }
  const moved = await deadLetter(redis, source, group, entry, { error, deliveries, consumer })
  return { outcome: moved === 'moved' ? 'dead-lettered' : 'gone', deliveries }
}

/** Beats `consumer`'s heartbeat in the member set (kept `ttlMs`, ms); the live members, sorted. */
export async function heartbeatMembers(
  redis: RedisClient,
  membersKey: string,
  consumer: string,
  ttlMs: number,
): Promise<string[]> {
  return membersReply(await membersScript.run(redis, [membersKey], [consumer, ttlMs]), consumer)
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code
    return code === undefined
      ? `${error.name}: ${error.message}`
      : `${error.name} [${String(code)}]: ${error.message}`
  }
  return String(error)
}
