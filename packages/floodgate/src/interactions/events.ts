import type { StreamEntry } from '../stream/types.js'
import { InvalidEventError } from './errors.js'
import { canonicalId } from './ids.js'
import { isPlayViewer } from './viewer.js'

/** A like or favourite event: the absolute state after the change, ordered by its stream id. */
export interface MembershipEvent {
  kind: 'like' | 'favorite'
  /** The counted item (wire field `v`). */
  itemId: string
  userId: string
  active: boolean
  /** Stream id parts (ms, seq) as decimal strings, for the watermark. */
  ms: string
  seq: string
  /** Redis time of the change (ms since epoch). */
  atMs: string
}

/** A counted play; `eventId` (`<itemId>:<streamId>`) keys the play log row. */
export interface PlayEvent {
  kind: 'play'
  eventId: string
  itemId: string
  viewer: string
  atMs: string
}

export type InteractionEvent = MembershipEvent | PlayEvent

/**
 * Reads one stream entry written by the toggle or play script. Wire fields: `k` kind, `v` item
 * id, `u` user id / `w` viewer, `s` state (1/0), `t` Redis time (ms). The names are those of
 * earlier versions, so entries already in a stream and consumers not yet upgraded read alike.
 * @throws {InvalidEventError} when a field is missing or malformed.
 */
export function parseInteractionEvent(entry: StreamEntry): InteractionEvent {
  const f = entry.fields
  // the parts as Redis wrote them (decimal, no leading zeros): no BigInt per event
  const id = STREAM_ID.exec(entry.id)
  if (!id) throw new InvalidEventError(entry.id, 'malformed stream id')
  const itemId = field(entry, 'v', (v) => canonicalId('v', v))
  const atMs = field(entry, 't', (t) => {
    if (!/^\d{1,15}$/.test(t)) throw new Error('not a time in ms')
    return t
  })
  if (f.k === 'like' || f.k === 'favorite') {
    const userId = field(entry, 'u', (u) => canonicalId('u', u))
    if (f.s !== '0' && f.s !== '1') throw new InvalidEventError(entry.id, `s must be 0 or 1, got ${f.s}`)
    return {
      kind: f.k,
      itemId,
      userId,
      active: f.s === '1',
      ms: id[1]!,
      seq: id[2]!,
      atMs,
    }
  }
  if (f.k === 'play') {
    const viewer = field(entry, 'w', (w) => {
      if (!isPlayViewer(w)) throw new Error('not a viewer')
      return w
    })
    return { kind: 'play', eventId: `${itemId}:${entry.id}`, itemId, viewer, atMs }
  }
  throw new InvalidEventError(entry.id, `unknown kind ${JSON.stringify(f.k)}`)
}

const STREAM_ID = /^(\d{1,20})-(\d{1,20})$/

function field(entry: StreamEntry, name: string, check: (value: string) => string): string {
  const value = entry.fields[name]
  if (value === undefined) throw new InvalidEventError(entry.id, `missing field ${name}`)
  try {
    return check(value)
  } catch (error) {
    throw new InvalidEventError(
      entry.id,
      `field ${name}=${JSON.stringify(value)}: ${(error as Error).message}`,
    )
  }
}
