import type { StreamEntry } from './types.js'

/** Turns `[id, [field, value, …]]` items into entries; items whose fields are nil (deleted) are skipped. */
export function toEntries(stream: string, items: unknown): StreamEntry[] {
  const entries: StreamEntry[] = []
  if (!Array.isArray(items)) return entries
  for (const item of items) {
    if (!Array.isArray(item) || typeof item[0] !== 'string' || !Array.isArray(item[1])) continue
    const raw = item[1] as unknown[]
    const fields: Record<string, string> = {}
    for (let i = 0; i + 1 < raw.length; i += 2) fields[String(raw[i])] = String(raw[i + 1])
    entries.push({ stream, id: item[0], fields })
  }
  return entries
}

/**
 * Parses an XREADGROUP reply: `null`, RESP2's `[[stream, items], …]`, or RESP3's map, which
 * ioredis flattens to `[stream, items, stream, items, …]`.
 */
export function parseReadReply(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return []
  const entries: StreamEntry[] = []
  if (typeof reply[0] === 'string') {
    for (let i = 0; i + 1 < reply.length; i += 2) entries.push(...toEntries(String(reply[i]), reply[i + 1]))
    return entries
  }
  for (const pair of reply) {
    if (Array.isArray(pair) && typeof pair[0] === 'string') entries.push(...toEntries(pair[0], pair[1]))
  }
  return entries
}

/**
 * Parses a `read-compact-1.lua` reply: per entry one string `<id>\0<field>\0<value>…`, or (an
 * entry with a NUL byte in its fields) XREADGROUP's `[id, [field, value, …]]`.
 */
export function parseCompactRead(stream: string, reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return []
  const entries: StreamEntry[] = []
  for (const item of reply) {
    if (typeof item !== 'string') {
      entries.push(...toEntries(stream, [item]))
      continue
    }
    const parts = item.split('\0')
    const fields: Record<string, string> = {}
    for (let i = 1; i + 1 < parts.length; i += 2) fields[parts[i]!] = parts[i + 1]!
    entries.push({ stream, id: parts[0]!, fields })
  }
  return entries
}

/** Parses an XAUTOCLAIM reply (Redis 7: `[nextCursor, items, deletedIds]`). */
export function parseAutoClaimReply(
  stream: string,
  reply: unknown,
): { cursor: string; entries: StreamEntry[]; deleted: number } {
  if (!Array.isArray(reply)) return { cursor: '0-0', entries: [], deleted: 0 }
  const cursor = typeof reply[0] === 'string' ? reply[0] : '0-0'
  const deleted = Array.isArray(reply[2]) ? reply[2].length : 0
  return { cursor, entries: toEntries(stream, reply[1]), deleted }
}

/** Delivery count from an `XPENDING key group id id 1` reply; 0 when the entry is not pending. */
export function parseDeliveryCount(reply: unknown): number {
  if (!Array.isArray(reply) || !Array.isArray(reply[0])) return 0
  const count = Number(reply[0][3])
  return Number.isFinite(count) ? count : 0
}
