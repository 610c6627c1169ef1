import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * Spawns a TypeScript worker in its own Node process (through tsx, with the
 * `floodgate-source` condition), for multi-process concurrency tests.
 * The worker talks back with JSON lines on stdout; `messages` collects them.
 */
export interface Worker {
  child: ChildProcess
  messages: unknown[]
  /** Resolves with the exit code (or signal name) when the process ends. */
  exited: Promise<number | string>
  /** Resolves with the first message matching `predicate`. */
  waitFor(predicate: (message: unknown) => boolean, timeoutMs?: number): Promise<unknown>
}

const PARENT_ENV = 'FG_TEST_WORKER_PARENT_PID'

/** Workers still running, killed when the test process exits (a failed or timed-out test skips its cleanup). */
const live = new Set<ChildProcess>()
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

// In a worker (every worker imports `report` from here): exit once the test process is gone, even
// if it was SIGKILLed, so an aborted run leaves no producer writing to Redis for ever.
const parentPid = Number(process.env[PARENT_ENV])
if (parentPid > 0 && process.ppid === parentPid) {
  setInterval(() => {
    if (process.ppid !== parentPid) process.exit(1)
  }, 500).unref()
}

export function spawnWorker(file: URL, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Worker {
  const child = spawn(
    process.execPath,
    ['--conditions=floodgate-source', '--import', 'tsx', fileURLToPath(file), ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, ...env, [PARENT_ENV]: String(process.pid) },
    },
  )
  live.add(child)
  child.once('exit', () => live.delete(child))
  const messages: unknown[] = []
  const listeners = new Set<(message: unknown) => void>()
  let buffer = ''
  child.stdout?.setEncoding('utf8')
  child.stdout?.on('data', (chunk: string) => {
    buffer += chunk
    let newline = buffer.indexOf('\n')
    while (newline >= 0) {
      const line = buffer.slice(0, newline).trim()
      buffer = buffer.slice(newline + 1)
      if (line.startsWith('{')) {
        const message = JSON.parse(line) as unknown
        messages.push(message)
        for (const listener of listeners) listener(message)
      }
      newline = buffer.indexOf('\n')
    }
  })
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)),
  )
  return {
    child,
    messages,
    exited,
    waitFor(predicate, timeoutMs = 30_000) {
      const seen = messages.find(predicate)
      if (seen !== undefined) return Promise.resolve(seen)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(listener)
          reject(new Error(`worker ${child.pid} sent no matching message within ${timeoutMs} ms`))
        }, timeoutMs)
        const listener = (message: unknown) => {
          if (!predicate(message)) return
          clearTimeout(timer)
          listeners.delete(listener)
          resolve(message)
        }
        listeners.add(listener)
      })
    },
  }
}

/** Writes one JSON line to stdout: the worker side of {@link spawnWorker}. */
export function report(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}
