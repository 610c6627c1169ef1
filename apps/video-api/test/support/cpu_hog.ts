import { type ChildProcess, spawn } from 'node:child_process'

/**
 * A child process spinning one core at 100 % (`for(;;){}`), so a burst meets a machine as loaded
 * as a real flood makes it. `stop()` kills it (SIGKILL) and waits for the exit; call it in a
 * `finally`.
 */
export function startCpuHog(): { child: ChildProcess; stop(): Promise<void> } {
  const child = spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    },
  }
}
