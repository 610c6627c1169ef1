import { randomBytes, type ScryptOptions, scrypt as scryptCb, timingSafeEqual } from 'node:crypto'

/**
 * Password hashing with scrypt (RFC 7914), a memory-hard KDF, through
 * node:crypto. Parameters follow the OWASP Password Storage Cheat Sheet
 * (N=2^15, r=8, p=1: 32 MiB per hash). Stored as
 * `scrypt$<N>$<r>$<p>$<salt b64>$<hash b64>` so parameters can change later.
 */
const N = 2 ** 15
const R = 8
const P = 1
const KEY_BYTES = 32
const MAXMEM = 64 * 1024 * 1024

function scrypt(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, KEY_BYTES, { ...options, maxmem: MAXMEM }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  )
}

/** Hashes `password` with a random 16-byte salt (or the given one, for deterministic seeding). */
export async function hashPassword(password: string, salt: Buffer = randomBytes(16)): Promise<string> {
  const key = await scrypt(password, salt, { N, r: R, p: P })
  return `scrypt$${N}$${R}$${P}$${salt.toString('base64')}$${key.toString('base64')}`
}

/** Constant-time check of `password` against a stored hash; false for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$')
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false
  const [n, r, p] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
  const salt = Buffer.from(parts[4] ?? '', 'base64')
  const expected = Buffer.from(parts[5] ?? '', 'base64')
  if (expected.length !== KEY_BYTES) return false
  const actual = await scrypt(password, salt, { N: n, r, p })
  return timingSafeEqual(actual, expected)
}

let dummy: Promise<string> | undefined
/**
 * A real hash of a random password, computed once: compared against when the
 * user does not exist, so a login takes the same time either way.
 */
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(16).toString('hex'))
  return dummy
}
