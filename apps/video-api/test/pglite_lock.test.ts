import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { openPglite } from '../src/db/connect.js'
import { DataDirLockedError, lockDataDir } from '../src/db/pglite_lock.js'
import { runWorker } from './support/workers.js'

// One PGlite data folder, one process: a second opener must be refused (it would start,
// answer 201 and lose writes). About PGlite only: runs in both suite modes.
const root = mkdtempSync(join(tmpdir(), 'va-pglite-lock-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

describe('PGlite data folder lock', () => {
  it('two processes opening one folder at once: exactly one gets it, the other is refused with VIDEO_API_DATA_DIR_LOCKED', async () => {
    const dir = join(root, 'race')
    const startAt = Date.now() + 6000 // both workers are up by then, even on a loaded machine
    const reports = await Promise.all(
      [0, 1].map(() =>
        runWorker(new URL('./workers/pglite_open_worker.ts', import.meta.url), [
          dir,
          String(startAt),
          '4000',
        ]),
      ),
    )
    const results = reports.map(
      (r) => (r[0] ?? { ok: false, code: 'no report' }) as { ok: boolean; code?: string },
    )
    expect(results.filter((r) => r.ok)).toHaveLength(1)
    expect(results.filter((r) => !r.ok).map((r) => r.code)).toEqual(['VIDEO_API_DATA_DIR_LOCKED'])
    expect(existsSync(`${dir}.lock`), 'the winner releases the lock on close').toBe(false)
  }, 60_000)

  it('refuses a folder whose lock names a live process, and says which', async () => {
    const dir = join(root, 'live')
    const holder = spawn('sleep', ['30'], { stdio: 'ignore' })
    try {
      writeFileSync(`${dir}.lock`, String(holder.pid))
      const error = await openPglite(dir).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(DataDirLockedError)
      expect((error as Error).message).toContain(String(holder.pid))
      expect(readFileSync(`${dir}.lock`, 'utf8')).toBe(String(holder.pid))
    } finally {
      holder.kill('SIGKILL')
    }
  })

  it('takes over a lock left by a dead process (SIGKILL) and removes it on release', async () => {
    const lockPath = join(root, 'stale.lock')
    const dead = spawn('true', { stdio: 'ignore' })
    await new Promise((resolve) => dead.once('exit', resolve))
    writeFileSync(lockPath, String(dead.pid))
    const release = lockDataDir(lockPath)
    expect(readFileSync(lockPath, 'utf8')).toBe(String(process.pid))
    release()
    expect(existsSync(lockPath)).toBe(false)
  })
})
