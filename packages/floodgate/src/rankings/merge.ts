import { parseScore } from './finite.js'
import { compareRanked, fromMember } from './member.js'
import type { RankedVideo } from './types.js'

/** A flat `WITHSCORES` reply (`[member, score, member, score, …]`) as ranked entries. */
export function parseWithScores(reply: unknown): { id: string; score: number }[] {
  const flat = reply as string[]
  const out: { id: string; score: number }[] = []
  for (let i = 0; i + 1 < flat.length; i += 2) {
    out.push({ id: fromMember(flat[i]!), score: parseScore(flat[i + 1]!) })
  }
  return out
}

/**
 * Merges per-partition tops (each already in rank order) into one global top:
 * score descending, ties by higher (newer) video id first; keeps `limit`.
 * `transform` maps a stored score to the reported one (identity by default).
 * Entries whose score is not above zero (a count back to 0, a window whose
 * unlikes outweigh its likes) are left out: they are not "hot".
 */
export function mergeTops(
  parts: readonly { id: string; score: number }[][],
  limit: number,
  transform: (score: number) => number = (s) => s,
): RankedVideo[] {
  const all = parts.flat().filter((e) => e.score > 0)
  all.sort(compareRanked)
  return all.slice(0, limit).map((e) => ({ videoId: e.id, score: transform(e.score) }))
}
