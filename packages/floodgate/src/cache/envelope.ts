import type { Codec } from './codec.js'
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

/**
 * Parses an envelope.
 * @throws {CorruptEntryError} when the header is malformed or the codec rejects the payload.
 */
export function decodeEnvelope<T>(codec: Codec<T>, raw: Buffer): Envelope<T> {
  const p1 = raw.indexOf(PIPE)
  const p2 = raw.indexOf(PIPE, p1 + 1)
  const p3 = raw.indexOf(PIPE, p2 + 1)
  const p4 = raw.indexOf(PIPE, p3 + 1)
  if (p1 !== 3 || p2 !== 5 || p3 < 0 || p4 < 0 || raw.toString('latin1', 0, 3) !== 'fg1') {
    throw new CorruptEntryError('bad header')
  }
  const kind = raw[4]
  const expiresAtMs = Number(raw.toString('latin1', p2 + 1, p3))
  const version = raw.toString('latin1', p3 + 1, p4)
  if (!Number.isFinite(expiresAtMs) || !/^\d+$/.test(version))
    throw new CorruptEntryError('bad header fields')
  if (kind === 0x6e /* n */) {
    if (p4 !== raw.length - 1) throw new CorruptEntryError('negative entry with a payload')
    return { kind: 'negative', expiresAtMs, version, bytes: raw.length }
  }
  if (kind !== 0x76 /* v */) throw new CorruptEntryError('unknown kind')
  let value: T
  try {
    value = codec.decode(raw.subarray(p4 + 1))
  } catch (error) {
    throw new CorruptEntryError('codec rejected the payload', { cause: error })
  }
  return { kind: 'value', value, expiresAtMs, version, bytes: raw.length }
}
