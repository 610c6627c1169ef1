import { randomBytes } from 'node:crypto'
import { linkSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { VideoApiError } from '../errors/index.js'

/**
 * Another live process holds the PGlite data folder. `code`: `VIDEO_API_DATA_DIR_LOCKED`.
 * PGlite has no cross-process locking: two processes on one folder would both
 * acknowledge writes and the folder keep only one's.
 */
export class DataDirLockedError extends VideoApiError {
  constructor(lockPath: string, pid: number) {
    super(
      'VIDEO_API_DATA_DIR_LOCKED',
      `the embedded database is in use by process ${pid} (lock ${lockPath}; delete it if that process is not video-api); run one instance per DATA_DIR, or point several instances at a PostgreSQL server with DATABASE_URL`,
    )
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

function readPid(lockPath: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8'), 10)
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * Takes the exclusive lock file `lockPath` (holding this process id) and returns
 * its release. The file is written under a unique temporary name, then hard-linked
 * to `lockPath` (atomic, fails if it exists), so a rival never sees a lock without
 * its pid. A lock left by a dead process (SIGKILL, crash) is taken over; a live
 * holder makes it throw.
 * @throws {DataDirLockedError} when a live process (other than this one) holds the lock.
 */
export function lockDataDir(lockPath: string): () => void {
  const draft = `${lockPath}.${process.pid}.${randomBytes(4).toString('hex')}`
  writeFileSync(draft, String(process.pid), { mode: 0o600 })
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(draft, lockPath)
        return () => {
          if (readPid(lockPath) === process.pid) unlinkSync(lockPath)
        }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        const holder = readPid(lockPath)
        const live = holder !== undefined && holder !== process.pid && isAlive(holder)
        // A second EEXIST: another process took the stale lock between our unlink and link.
        if (live || attempt > 0) throw new DataDirLockedError(lockPath, holder ?? 0)
        unlinkSync(lockPath) // stale: its process is gone (SIGKILL, crash)
      }
    }
  } finally {
    unlinkSync(draft)
  }
}
