import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Runs a TS worker in its own Node process (tsx, floodgate-source) and resolves with its JSON-line reports. */
export function runWorker(file: URL, args: readonly string[]): Promise<Record<string, unknown>[]> {
  const child = spawn(
    process.execPath,
    ['--conditions=floodgate-source', '--import', 'tsx', fileURLToPath(file), ...args],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  )
  let out = ''
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString()
  })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('exit', () =>
      resolve(
        out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      ),
    )
  })
}

/** Worker side: one JSON line on stdout. */
export function report(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`)
}
