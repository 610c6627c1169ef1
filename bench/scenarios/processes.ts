import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream, type WriteStream } from 'node:fs'

/** Every child the bench started, so Ctrl-C or an error stops them all (by pid, nothing else). */
const children = new Set<ChildProcess>()

export function track(child: ChildProcess): ChildProcess {
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

/** SIGKILLs every child still running (last resort on exit). */
export function killAll(): void {
  for (const child of children) child.kill('SIGKILL')
}

/** Stops a child: SIGTERM, then SIGKILL after `graceMs`. */
export async function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  await exited
  clearTimeout(timer)
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Polls `check` every 100 ms until it returns true. @throws after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return
    await sleep(100)
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
}

/** A private redis-server (no persistence) on a fixed port: killable and restartable (empty) for outages. */
export class PrivateRedisServer {
  private child: ChildProcess | undefined
  private readonly log: WriteStream

  constructor(
    readonly port: number,
    logFile: string,
  ) {
    this.log = createWriteStream(logFile, { flags: 'a' })
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  async start(): Promise<void> {
    const child = track(
      spawn(
        'redis-server',
        [
          '--port',
          String(this.port),
          '--bind',
          '127.0.0.1',
          '--save',
          '',
          '--appendonly',
          'no',
          '--maxmemory-policy',
          'noeviction',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      ),
    )
    child.stdout?.pipe(this.log, { end: false })
    child.stderr?.pipe(this.log, { end: false })
    this.child = child
    await waitFor(
      `redis-server on ${this.port}`,
      async () => {
        const { Redis } = await import('ioredis')
        const r = new Redis(this.port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0 })
        r.on('error', () => {})
        try {
          await r.connect()
          return (await r.ping()) === 'PONG'
        } finally {
          r.disconnect()
        }
      },
      10_000,
    )
  }

  /** SIGKILL: the data is gone (no persistence), as in a crash. */
  async kill(): Promise<void> {
    const child = this.child
    this.child = undefined
    if (!child || child.exitCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGKILL')
    await exited
  }

  async stop(): Promise<void> {
    const child = this.child
    this.child = undefined
    if (child) await stop(child, 2000)
    this.log.end()
  }
}
