/** A message on a filter's channel (published by `announce-1.lua` and `publish-1.lua`). */
export type Announcement =
  | { kind: 'add'; seq: number; items: string[] }
  | { kind: 'generation'; generation: number }

/**
 * Parses `<addseq> <JSON array of items>` or `g <generation>`; undefined for anything else
 * (a message that is not ours is ignored).
 */
export function parseAnnouncement(message: string): Announcement | undefined {
  const space = message.indexOf(' ')
  if (space < 1) return undefined
  const head = message.slice(0, space)
  const rest = message.slice(space + 1)
  if (head === 'g') {
    const generation = Number(rest)
    return Number.isInteger(generation) && generation > 0 ? { kind: 'generation', generation } : undefined
  }
  const seq = Number(head)
  if (!Number.isInteger(seq) || seq < 1) return undefined
  try {
    const items: unknown = JSON.parse(rest)
    if (Array.isArray(items) && items.every((item) => typeof item === 'string'))
      return { kind: 'add', seq, items }
  } catch {
    // not ours
  }
  return undefined
}
