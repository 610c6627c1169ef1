import { createHash } from 'node:crypto'
import { InvalidArgumentError } from '../errors/index.js'
import { canonicalId, type EntityId } from './ids.js'

/**
 * Who played an item, for play dedupe: `u<userId>` for a signed-in user, or
 * `a<hash>` for an anonymous one, where the hash is the first 128 bits of
 * SHA-256 over the client IP and the user agent (hex). The raw IP is never
 * stored.
 * @throws {InvalidArgumentError} on an invalid user id or an empty IP.
 */
export function playViewer(who: { userId: EntityId } | { ip: string; userAgent?: string }): string {
  if ('userId' in who) return `u${canonicalId('userId', who.userId)}`
  if (who.ip.length === 0) throw new InvalidArgumentError('ip', 'must not be empty')
  const digest = createHash('sha256')
    .update(who.ip)
    .update('\n')
    .update(who.userAgent ?? '')
    .digest('hex')
  return `a${digest.slice(0, 32)}`
}

/** True when `viewer` has the shape {@link playViewer} produces. */
export function isPlayViewer(viewer: string): boolean {
  return /^(u[1-9]\d{0,18}|a[0-9a-f]{32})$/.test(viewer)
}

/** Bits of a play-dedupe hash ({@link playViewerHash}). */
const HASH_BITS = 53n

/**
 * The play-dedupe member of a viewer (from {@link playViewer}): the first 53 bits of SHA-256
 * over the viewer string (big-endian), as a decimal string in [1, 2^53 - 1] (0 becomes 1:
 * `play-6.lua` keeps 0 as a bucket placeholder). 53 bits, not 64: every such integer is exact
 * in a Lua double (Redis' Lua numbers), so the script takes the bucket from the hash's own low
 * bits with one `tonumber`, uniform for any bucket count; in an intset it takes 8 bytes as a
 * 64-bit one would (anything above 2^31 does).
 *
 * Two viewers with one hash count as one on an item (the documented undercount). Birthday
 * bound: among n distinct viewers of one item inside the window (two generations, so up to 2n
 * hashes checked) the expected number of colliding pairs is about (2n)²/2⁵⁴: 0.022 for
 * n = 10,000,000 viewers per window, i.e. an expected undercount of about 2·10⁻⁹ of the plays
 * (0.1 % would take n ≈ 4.5·10¹²).
 */
export function playViewerHash(viewer: string): string {
  const h = createHash('sha256').update(viewer).digest().readBigUInt64BE(0) >> (64n - HASH_BITS)
  return h === 0n ? '1' : h.toString()
}
