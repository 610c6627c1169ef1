import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Node flags that run a TypeScript file of the repo with floodgate from source (see shared NOTES.md). */
export const TS_NODE_FLAGS: readonly string[] = ['--conditions=floodgate-source', '--import', 'tsx']

/** Runs the TypeScript file `file` with `args` in a new Node process (same Node binary as this one). */
export function spawnTs(
  file: string | URL,
  args: readonly string[] = [],
  options: SpawnOptions = {},
): ChildProcess {
  const path = typeof file === 'string' ? file : fileURLToPath(file)
  return spawn(process.execPath, [...TS_NODE_FLAGS, path, ...args], options)
}
