import type { RedisClient } from '../redis/index.js'
import { compareRanked } from './member.js'
import { parseWithScores } from './merge.js'
import { SlotBatch } from './slot_batch.js'

/** One partition's ranked entries as read (in ZREVRANGE order). */
export type Entries = { id: string; score: number }[]

/** How a partition's read ended: whether entries past the ones read could still enter the top. */
interface PartRead {
  entries: Entries
  /** The reply held as many members as asked for (the ZSET may hold more). */
  full: boolean
  /** The last member read, finite score; undefined when it was left out as corrupt (or none). */
  last: { id: string; score: number } | undefined
}

/**
 * Reads from per-partition ranking ZSETs just the entries that can make the global top `limit`,
 * exactly, in at most two round trips: first the top `m` of every partition (`m` ≈ 2·limit ÷
 * partitions, at least 2), then, only from partitions whose `m`-th entry still ranks within the
 * global top `limit` of what was read, their entries `m … limit−1` that score at least the
 * `limit`-th candidate. A partition whose `m`-th entry
 * ranks below the `limit`-th candidate cannot hold another member of the top (its further entries
 * rank lower still). This is the threshold idea of Fagin's TA ("Optimal aggregation algorithms
 * for middleware", 2001) for sorted lists that partition the items. With 300 partitions and
 * limit 50 it reads ~600 entries instead of 15,000.
 *
 * `keep(score)` says whether a stored score belongs in a ranking at all (e.g. > 0); scores are
 * ranked as stored, so `keep` must be monotone (a kept score above a dropped one). Members with a
 * non-finite score are left out and passed to `onCorrupt` (they still take their place among a
 * partition's first `limit`); a partition whose last read member was one is read on. The answer
 * equals the merge of every partition's top `limit` (what the read did before, one round trip).
 * Commands already in `first` go out in the first round trip; their replies come back as `head`.
 * Returns `parts`, one list per partition (entries in rank order), to merge with `mergeTops`.
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function readTopsByThreshold(
  redis: RedisClient,
  keyOf: (p: number) => string,
  partitions: number,
  limit: number,
  what: string,
  options: { keep?: (score: number) => boolean; onCorrupt?: () => void; first?: SlotBatch } = {},
): Promise<{ parts: Entries[]; head: unknown[] }> {
  const keep = options.keep ?? (() => true)
  const m = Math.min(limit, Math.max(2, Math.ceil((2 * limit) / partitions)))
  const batch = options.first ?? new SlotBatch(redis)
  const offset = batch.length
  for (let p = 0; p < partitions; p++) {
    const key = keyOf(p)
    batch.add(key, (pipe) => pipe.zrevrange(key, 0, m - 1, 'WITHSCORES'))
  }
  const replies = await batch.exec(what)
  const head = replies.slice(0, offset)
  const reads = replies.slice(offset).map((reply) => parsePart(reply, m, options.onCorrupt))
  const candidates = reads.flatMap((r) => r.entries.filter((e) => keep(e.score)))
  candidates.sort(compareRanked)
  const bar = candidates.length >= limit ? candidates[limit - 1] : undefined
  const more: number[] = []
  reads.forEach((r, p) => {
    if (!r.full || m >= limit) return
    if (r.last === undefined) more.push(p)
    else if (keep(r.last.score) && (bar === undefined || compareRanked(r.last, bar) <= 0)) more.push(p)
  })
  if (more.length === 0) return { parts: reads.map((r) => r.entries), head }
  const second = new SlotBatch(redis)
  for (const p of more) {
    const key = keyOf(p)
    // only entries scoring at least the bar can enter; ranks m … limit−1 of those at most
    second.add(key, (pipe) =>
      pipe.zrevrangebyscore(key, '+inf', bar ? bar.score : '-inf', 'WITHSCORES', 'LIMIT', m, limit - m),
    )
  }
  const rest = await second.exec(what)
  more.forEach((p, i) => {
    reads[p]!.entries.push(...parsePart(rest[i], limit - m, options.onCorrupt).entries)
  })
  return { parts: reads.map((r) => r.entries), head }
}

function parsePart(reply: unknown, asked: number, onCorrupt?: () => void): PartRead {
  const flat = reply as string[]
  const entries = parseWithScores(flat, onCorrupt)
  const lastFinite = flat.length >= 2 && Number.isFinite(Number(flat[flat.length - 1]))
  return { entries, full: flat.length / 2 >= asked, last: lastFinite ? entries.at(-1) : undefined }
}
