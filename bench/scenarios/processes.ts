import type { ChildProcess } from 'node:child_process'
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { spawnTs } from '../support/spawn_ts.js'

/** What reaper.ts reads when the bench is gone. */
export interface ReaperState {
  /** PostgreSQL URL of a database to connect to for the drops (`postgres`). */
  adminUrl: string
  databases: string[]
  children: Array<{ pid: number; startedAt: string }>
}

/** The start time of process `pid` (field 22 of /proc/<pid>/stat, clock ticks since boot), or undefined when it is gone. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // the command (field 2) is in parentheses and may hold spaces: count fields after its ')'
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/** Every child the bench started, so Ctrl-C or an error stops them all (by pid, nothing else). */
const children = new Set<ChildProcess>()
let reaper: { file: string; state: ReaperState } | undefined

/** Writes the reaper's state file (atomically: a reaper never reads half a file). */
function saveReaperState(): void {
  if (!reaper) return
  reaper.state.children = [...children].flatMap((c) => {
    const startedAt = c.pid === undefined ? undefined : processStartTime(c.pid)
    return c.pid === undefined || startedAt === undefined ? [] : [{ pid: c.pid, startedAt }]
  })
  writeFileSync(`${reaper.file}.tmp`, JSON.stringify(reaper.state))
  renameSync(`${reaper.file}.tmp`, reaper.file)
}

export function track(child: ChildProcess): ChildProcess {
  children.add(child)
  saveReaperState()
  child.once('exit', () => {
    children.delete(child)
    saveReaperState()
  })
  return child
}

/**
 * Starts the watchdog (reaper.ts) in its own session: if this process dies without cleaning up
 * (SIGKILL, a killed process group), it SIGKILLs the children {@link track} saw and drops `databases`.
 * Call {@link reaperDone} after a clean-up.
 */
export function startReaper(file: string, adminUrl: string, databases: string[]): void {
  reaper = { file, state: { adminUrl, databases, children: [] } }
  saveReaperState()
  spawnTs(new URL('./reaper.ts', import.meta.url), [String(process.pid), file], {
    detached: true,
    stdio: 'ignore',
  }).unref()
}

/** Everything is cleaned up: the reaper has nothing to do. */
export function reaperDone(): void {
  if (reaper) rmSync(reaper.file, { force: true })
  reaper = undefined
}

/** SIGKILLs every child still running (last resort on exit). */
export function killAll(): void {
  for (const child of children) child.kill('SIGKILL')
}

/** SIGTERM → SIGKILL grace (ms): an instance writing its V8 CPU profile on exit (BENCH_CPU_PROFILE_DIR) needs longer. */
const STOP_GRACE_MS = process.env.BENCH_CPU_PROFILE_DIR ? 60_000 : 5_000

/** Stops a child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(child: ChildProcess, graceMs = STOP_GRACE_MS): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
