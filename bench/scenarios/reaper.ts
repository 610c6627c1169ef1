/**
 * The bench's watchdog: `reaper.ts <bench pid> <state file>`, started detached (its own session) by
 * {@link startReaper}, so it outlives the bench however the bench ends (SIGKILL, a CI timeout that
 * kills the process group). It polls the bench every 250 ms; once the bench is gone it reads the
 * state file — the bench's live children ({ pid, start time }) and its databases — SIGKILLs each
 * child that is still the same process (same start time: a recycled pid is left alone), drops each
 * database (`with (force)`), deletes the file and exits; what it did goes to `<state file>.log`. A
 * bench that cleaned up itself deletes the file first: then there is nothing to do.
 */
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs'
import pg from 'pg'
import { processStartTime, type ReaperState } from './processes.js'

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function reap(file: string, log: (line: string) => void): Promise<void> {
  if (!existsSync(file)) return
  const state = JSON.parse(readFileSync(file, 'utf8')) as ReaperState
  for (const { pid, startedAt } of state.children)
    if (processStartTime(pid) === startedAt) {
      try {
        process.kill(pid, 'SIGKILL')
        log(`SIGKILL ${pid}`)
      } catch (error) {
        log(`SIGKILL ${pid}: ${(error as Error).message}`)
      }
    }
  if (state.databases.length > 0) {
    const client = new pg.Client({ connectionString: state.adminUrl })
    await client.connect()
    for (const name of state.databases)
      await client.query(`drop database if exists ${name} with (force)`).then(
        () => log(`dropped database ${name}`),
        (error: Error) => log(`drop database ${name}: ${error.message}`),
      )
    await client.end()
  }
  rmSync(file, { force: true })
}

const [parent, file] = process.argv.slice(2)
if (parent && file) {
  const log = (line: string) => appendFileSync(`${file}.log`, `${new Date().toISOString()} ${line}\n`)
  while (alive(Number(parent))) await new Promise((resolve) => setTimeout(resolve, 250))
  await reap(file, log).catch((error: Error) => log(`failed: ${error.stack}`))
  process.exit(0)
}
