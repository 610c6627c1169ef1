import { type Codec, jsonCodec } from './codec.js'
import type { L1Admission } from './l1/l1_tracking.js'

/**
 * What one L2 entry holds. Wire format (bytes):
 *
 *     fg1|<kind>|<logical expiry, ms epoch>|<data version>|<payload>
 *
 * `kind` is `v` (a value: `payload` is the codec output) or `n` (the negative
 * sentinel: `payload` is empty). Because the kind lives in the header written
 * by the cache and never in the codec's output, no codec output can be read
 * back as "not found". The header is ASCII, so binary payloads are fine.
 */
export type Envelope<T> = (
  | { kind: 'value'; value: T; expiresAtMs: number; version: string; bytes: number }
  | { kind: 'negative'; expiresAtMs: number; version: string; bytes: number }
) & {
  /** Set by a read on the tracked connection: how L1 may keep it (`l1/l1_tracking.ts`). */
  admission?: L1Admission
}

/** Prefix of every negative envelope; the fill script matches it to keep NX semantics. */
export const NEGATIVE_PREFIX = 'fg1|n|'

/** Thrown by {@link decodeEnvelope} for bytes that are not a floodgate envelope. */
export class CorruptEntryError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`corrupt cache entry: ${reason}`, options)
    this.name = 'CorruptEntryError'
  }
}

/** Builds the bytes of a value envelope. */
export function encodeValue<T>(codec: Codec<T>, value: T, expiresAtMs: number, version: string): Buffer {
  const payload = codec.encode(value)
  const header = Buffer.from(`fg1|v|${expiresAtMs}|${version}|`, 'latin1')
  return Buffer.concat([header, typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload])
}

/** Builds the bytes of a negative (not found) envelope. */
export function encodeNegative(expiresAtMs: number, version: string): Buffer {
  return Buffer.from(`${NEGATIVE_PREFIX}${expiresAtMs}|${version}|`, 'latin1')
}

const PIPE = 0x7c
const ZERO = 0x30
const NINE = 0x39

/**
 * Where the run of ASCII digits starting at `start` ends (the index of the `|` after it), or -1
 * when the run is empty or something other than a digit comes before a `|`.
 */
function digitsEnd(raw: Buffer, start: number): number {
  let i = start
  while (i < raw.length && raw[i]! >= ZERO && raw[i]! <= NINE) i++
  return i > start && raw[i] === PIPE ? i : -1
}

/**
 * The digits of `raw` in [start, end) as a string. A short run without a leading zero (every
 * version INCR writes, up to 15 digits) goes through a number: V8 caches the strings of small
 * numbers, where `toString('latin1')` builds a new one per read.
 */
function digitsAt(raw: Buffer, start: number, end: number): string {
  if (end - start > 15 || (raw[start] === ZERO && end - start > 1)) return raw.toString('latin1', start, end)
  let n = 0
  for (let i = start; i < end; i++) n = n * 10 + (raw[i]! - ZERO)
  return String(n)
}

/**
 * Parses an envelope. The header is read byte by byte (no intermediate strings); the default
 * JSON codec reads the payload in place, other codecs get it as a Buffer view.
 * @throws {CorruptEntryError} when the header is malformed or the codec rejects the payload.
 */
export function decodeEnvelope<T>(codec: Codec<T>, raw: Buffer): Envelope<T> {
  // 'f' 'g' '1' '|' <kind> '|'
  if (raw[0] !== 0x66 || raw[1] !== 0x67 || raw[2] !== 0x31 || raw[3] !== PIPE || raw[5] !== PIPE)
    throw new CorruptEntryError('bad header')
  const kind = raw[4]
  const p3 = digitsEnd(raw, 6)
  const p4 = p3 < 0 ? -1 : digitsEnd(raw, p3 + 1)
  if (p4 < 0) throw new CorruptEntryError('bad header fields')
  // ms epochs stay far below 2^53, so the digits add up exactly
  let expiresAtMs = 0
  for (let i = 6; i < p3; i++) expiresAtMs = expiresAtMs * 10 + (raw[i]! - ZERO)
  const version = digitsAt(raw, p3 + 1, p4)
  if (kind === 0x6e /* n */) {
    if (p4 !== raw.length - 1) throw new CorruptEntryError('negative entry with a payload')
    return { kind: 'negative', expiresAtMs, version, bytes: raw.length }
  }
  if (kind !== 0x76 /* v */) throw new CorruptEntryError('unknown kind')
  let value: T
  try {
    value =
      codec === jsonCodec
        ? (JSON.parse(raw.toString('utf8', p4 + 1)) as T)
        : codec.decode(raw.subarray(p4 + 1))
  } catch (error) {
    throw new CorruptEntryError('codec rejected the payload', { cause: error })
  }
  return { kind: 'value', value, expiresAtMs, version, bytes: raw.length }
}
