import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * Runs a TS worker in its own Node process (tsx, floodgate-source) and resolves with its JSON-line
 * reports; `onReport` sees each report as it arrives (e.g. a burst's `started`). With `onSpawn`,
 * the worker's stdin is a pipe the caller may write to (commands to the worker).
 */
export function runWorker(
  file: URL,
  args: readonly string[],
  onReport?: (message: Record<string, unknown>) => void,
  onSpawn?: (child: ChildProcess) => void,
): Promise<Record<string, unknown>[]> {
  const child = spawn(
    process.execPath,
    ['--conditions=floodgate-source', '--import', 'tsx', fileURLToPath(file), ...args],
    {
      stdio: [onSpawn ? 'pipe' : 'ignore', 'pipe', 'inherit'],
    },
  )
  onSpawn?.(child)
  const reports: Record<string, unknown>[] = []
  let pending = ''
  child.stdout?.on('data', (d: Buffer) => {
    const lines = (pending + d.toString()).split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines.filter((l) => l.startsWith('{'))) {
      const message = JSON.parse(line) as Record<string, unknown>
      reports.push(message)
      onReport?.(message)
    }
  })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', () => resolve(reports))
  })
}

/** Worker side: one JSON line on stdout. */
export function report(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}
