import { randomBytes } from 'node:crypto'
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The JWT secret: `configured` when given, else the one kept in
 * `<dataDir>/jwt-secret`, created on first use. Creation writes a temp file
 * and hard-links it into place (link fails if the name exists, like O_EXCL),
 * so instances starting at once from one checkout all end up with the same
 * secret and accept each other's tokens.
 */
export function resolveJwtSecret(configured: string | undefined, dataDir: string): string {
  if (configured !== undefined) return configured
  mkdirSync(dataDir, { recursive: true })
  const file = join(dataDir, 'jwt-secret')
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  writeFileSync(temp, randomBytes(48).toString('base64url'), { mode: 0o600 })
  try {
    linkSync(temp, file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
  } finally {
    unlinkSync(temp)
  }
  return readFileSync(file, 'utf8').trim()
}
