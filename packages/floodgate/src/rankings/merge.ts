import { compareRanked, fromMember } from './member.js'
import type { RankedItem } from './types.js'

/**
 * A flat `WITHSCORES` reply (`[member, score, member, score, …]`) as ranked entries.
 * A member whose score is not a finite number (`inf`, `-inf`, `nan`: written by something
 * other than floodgate, or a weighted merge of one) is left out and passed to `onCorrupt`,
 * so one bad member never fails the whole answer.
 */
export function parseWithScores(
  reply: unknown,
  onCorrupt: (member: string, score: string) => void = () => {},
): { id: string; score: number }[] {
  const flat = reply as string[]
  const out: { id: string; score: number }[] = []
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const score = Number(flat[i + 1])
    if (Number.isFinite(score)) out.push({ id: fromMember(flat[i]!), score })
    else onCorrupt(flat[i]!, flat[i + 1]!)
  }
  return out
}

/**
 * Merges per-partition tops (each already in rank order) into one global top:
 * score descending, ties by higher (newer) item id first; keeps `limit`.
 * `transform` maps a stored score to the reported one (identity by default) and
 * must be increasing. Entries whose reported score is not above zero (a count
 * back to 0, a window whose unlikes outweigh its likes, a decayed count that
 * underflowed) are left out: they are not "hot". The test is on the reported
 * score: a log-space score below zero is still a positive decayed count.
 */
export function mergeTops(
  parts: readonly { id: string; score: number }[][],
  limit: number,
  transform: (score: number) => number = (s) => s,
): RankedItem[] {
  const all = parts
    .flat()
    .map((e) => ({ id: e.id, score: e.score, reported: transform(e.score) }))
    .filter((e) => e.reported > 0)
  all.sort(compareRanked)
  return all.slice(0, limit).map((e) => ({ itemId: e.id, score: e.reported }))
}
