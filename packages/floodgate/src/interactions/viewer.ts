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
