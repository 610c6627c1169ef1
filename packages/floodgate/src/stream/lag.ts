import type { RedisClient } from '../redis/types.js'
import { trimReply, trimScript } from './scripts.js'
import { parseStreamId } from './stream_id.js'
import type { LagSnapshot, StreamSource } from './types.js'

/**
 * Trims acknowledged entries on every stream (`trim-1.lua`) and sums the group's lag; also the age
 * (ms) of each stream's oldest undelivered entry, in `sources` order (0 when none).
 */
export async function trimAndMeasureLag(
  redis: RedisClient,
  sources: readonly StreamSource[],
  group: string,
): Promise<{ lag: LagSnapshot; undeliveredAgesMs: number[] }> {
  const replies = await Promise.all(sources.map((s) => trimScript.run(redis, [s.stream], [group])))
  const lag: LagSnapshot = {
    length: 0,
    pending: 0,
    undelivered: 0,
    oldestPendingAgeMs: 0,
    oldestUndeliveredAgeMs: 0,
    trimmed: 0,
  }
  const undeliveredAgesMs: number[] = []
  for (const reply of replies.map(trimReply)) {
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

/** Age (ms) of a stream id's time at `nowMs`; 0 for '' (no entry). */
function ageMs(id: string, nowMs: number): number {
  const parts = id === '' ? undefined : parseStreamId(id)
  return parts ? Math.max(0, nowMs - Number(parts.ms)) : 0
}
