import { createSigner, createVerifier } from 'fast-jwt'

/** PostgreSQL bigint maximum: a `sub` above it is not a user id. */
const MAX_BIGINT = 9223372036854775807n

export interface TokenService {
  /** A signed HS256 bearer token for user `userId` (a string of digits), valid `ttlS` seconds. */
  issue(userId: string): string
  /** The user id in a valid token, or `undefined` for a missing, expired, tampered, wrong-algorithm or other-database one. */
  verify(token: string): string | undefined
  ttlS: number
}

/**
 * JWT (RFC 7519) with HS256 only: tokens signed with any other algorithm (including `none`) are refused.
 * `audience` (the database's installation id, see readInstallationId) goes into every token as `aud`
 * and must match on verify: the JWT secret lives in DATA_DIR and does not depend on the database, so
 * without it a token for user 201 of one database would be accepted as user 201 of another.
 */
export function createTokenService(secret: string, ttlS: number, audience: string): TokenService {
  const sign = createSigner({
    key: secret,
    algorithm: 'HS256',
    expiresIn: ttlS * 1000,
    iss: 'video-api',
    aud: audience,
  })
  // fast-jwt only checks `iss`/`exp` when present: require them, so a token without an expiry or issuer is refused.
  const check = createVerifier({
    key: secret,
    algorithms: ['HS256'],
    allowedIss: 'video-api',
    allowedAud: audience,
    requiredClaims: ['iss', 'aud', 'exp', 'sub'],
    cache: 1000,
  })
  return {
    ttlS,
    issue: (userId) => sign({ sub: userId }),
    verify(token) {
      try {
        const payload = check(token) as { sub?: unknown }
        return typeof payload.sub === 'string' &&
          /^[1-9][0-9]{0,18}$/.test(payload.sub) &&
          BigInt(payload.sub) <= MAX_BIGINT
          ? payload.sub
          : undefined
      } catch {
        return undefined
      }
    },
  }
}
