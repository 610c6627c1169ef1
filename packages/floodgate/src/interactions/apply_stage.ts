import type { MembershipEvent, PlayEvent } from './events.js'

const KIND = { like: 1, favorite: 2 } as const

/**
 * The batch as COPY text rows for the staging table (columns as `STAGE_COLUMNS`). No value needs
 * escaping: ids and times are digits, viewers `u<digits>`/`a<hex>` and event ids
 * `<digits>:<digits>-<digits>`, all checked by `parseInteractionEvent`.
 */
export function stageRows(memberships: readonly MembershipEvent[], plays: readonly PlayEvent[]): string {
  const rows: string[] = []
  for (const e of memberships)
    rows.push(
      `${KIND[e.kind]}\t${e.itemId}\t${e.userId}\t${e.ms}\t${e.seq}\t${e.active ? 't' : 'f'}\t${e.atMs}\t\\N\t\\N\n`,
    )
  for (const e of plays)
    rows.push(`0\t${e.itemId}\t\\N\t\\N\t\\N\t\\N\t${e.atMs}\t${e.eventId}\t${e.viewer}\n`)
  return rows.join('')
}

/** The batch as the array parameters of the merge's `params` source ($1…$11). */
export function stageParams(memberships: readonly MembershipEvent[], plays: readonly PlayEvent[]): unknown[] {
  return [
    memberships.map((e) => KIND[e.kind]),
    memberships.map((e) => e.itemId),
    memberships.map((e) => e.userId),
    memberships.map((e) => e.ms),
    memberships.map((e) => e.seq),
    memberships.map((e) => e.active),
    memberships.map((e) => e.atMs),
    plays.map((e) => e.eventId),
    plays.map((e) => e.itemId),
    plays.map((e) => e.viewer),
    plays.map((e) => e.atMs),
  ]
}
