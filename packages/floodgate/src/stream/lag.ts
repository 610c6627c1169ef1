import { SlotBatch } from '../rankings/slot_batch.js'
import type { RedisClient } from '../redis/types.js'
import { type TrimReply, trimReply, trimScript } from './scripts.js'
import { parseStreamId } from './stream_id.js'
import type { LagSnapshot, StreamSource } from './types.js'

/**
 * Streams found idle by their last trim (nothing pending or undelivered, at most one entry left),
 * with that entry's id ('' for none) and their length. Until a stream's last entry changes nothing
 * in it can become pending, undelivered or trimmable, so {@link trimAndMeasureLag} probes it with
 * one XREVRANGE … COUNT 1 (all probes in one pipeline) instead of running `trim-1.lua` (about
 * seven commands): an idle flush over hundreds of partitions then costs one cheap read per stream
 * per maintenance.
 */
export type IdleStreams = Map<string, { lastId: string; length: number }>

/**
 * Trims acknowledged entries on every stream (`trim-1.lua`) and sums the group's lag; also the age
 * (ms) of each stream's oldest undelivered entry, in `sources` order (0 when none). With `idle`,
 * streams it holds are only probed (see {@link IdleStreams}) and trimmed when their last entry
 * changed; `idle` is kept up to date.
 */
export async function trimAndMeasureLag(
  redis: RedisClient,
  sources: readonly StreamSource[],
  group: string,
  idle?: IdleStreams,
): Promise<{ lag: LagSnapshot; undeliveredAgesMs: number[] }> {
  const replies = new Map<string, TrimReply>()
  const trim = async (streams: readonly string[]) => {
    const trimmed = await Promise.all(streams.map((s) => trimScript.run(redis, [s], [group])))
    streams.forEach((stream, i) => {
      const reply = trimReply(trimmed[i])
      replies.set(stream, reply)
      if (!idle) return
      const isIdle =
        reply.pending === 0 &&
        reply.undelivered === 0 &&
        (reply.length === 0 || (reply.length === 1 && reply.idleLastId !== ''))
      if (isIdle) idle.set(stream, { lastId: reply.idleLastId, length: reply.length })
      else idle.delete(stream)
    })
  }
  const probed = idle ? sources.filter((s) => idle.has(s.stream)).map((s) => s.stream) : []
  const rest = idle
    ? sources.filter((s) => !idle.has(s.stream)).map((s) => s.stream)
    : sources.map((s) => s.stream)
  const [lastIds] = await Promise.all([lastEntryIds(redis, probed), trim(rest)])
  const changed = probed.filter((stream, i) => lastIds[i] !== idle?.get(stream)?.lastId)
  if (changed.length > 0) await trim(changed)
  const lag: LagSnapshot = {
    length: 0,
    pending: 0,
    undelivered: 0,
    oldestPendingAgeMs: 0,
    oldestUndeliveredAgeMs: 0,
    trimmed: 0,
  }
  const undeliveredAgesMs: number[] = []
  for (const { stream } of sources) {
    const reply = replies.get(stream)
    if (!reply) {
      // idle and unchanged: its entry (if any) is acknowledged, nothing to trim or wait for
      lag.length += idle?.get(stream)?.length ?? 0
      undeliveredAgesMs.push(0)
      continue
    }
    lag.trimmed += reply.trimmed
    lag.length += reply.length
    lag.pending += reply.pending
    lag.undelivered += reply.undelivered
    lag.oldestPendingAgeMs = Math.max(lag.oldestPendingAgeMs, ageMs(reply.oldestPendingId, reply.nowMs))
    undeliveredAgesMs.push(ageMs(reply.firstUndeliveredId, reply.nowMs))
    lag.oldestUndeliveredAgeMs = Math.max(
      lag.oldestUndeliveredAgeMs,
      ageMs(reply.firstUndeliveredId, reply.nowMs),
    )
  }
  return { lag, undeliveredAgesMs }
}

/** Each stream's last entry id ('' when empty or missing): XREVRANGE … COUNT 1, one pipeline. */
async function lastEntryIds(redis: RedisClient, streams: readonly string[]): Promise<string[]> {
  if (streams.length === 0) return []
  const batch = new SlotBatch(redis)
  for (const stream of streams) batch.add(stream, (pipe) => pipe.xrevrange(stream, '+', '-', 'COUNT', 1))
  const replies = await batch.exec('stream idle probe')
  return replies.map((reply) => {
    const first = Array.isArray(reply) ? (reply[0] as unknown) : undefined
    return Array.isArray(first) && typeof first[0] === 'string' ? first[0] : ''
  })
}

/** Age (ms) of a stream id's time at `nowMs`; 0 for '' (no entry). */
function ageMs(id: string, nowMs: number): number {
  const parts = id === '' ? undefined : parseStreamId(id)
  return parts ? Math.max(0, nowMs - Number(parts.ms)) : 0
}
