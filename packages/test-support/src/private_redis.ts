import { type ChildProcess, spawn } from 'node:child_process'
import { createWriteStream, mkdtempSync, rmSync, type WriteStream } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { freePort } from './ports.js'
import { until } from './until.js'

export const PRIVATE_REDIS_DEFAULTS = {
  /** How long a (re)started server may take to answer PING (ms). */
  startTimeoutMs: 10_000,
  /** Between two PINGs while it starts (ms). */
  probeEveryMs: 50,
}

export interface PrivateRedisOptions {
  /** Port on 127.0.0.1; a free one when absent (give one a client already points at, for a late start). */
  port?: number
  /** File the server's stdout and stderr are appended to; discarded when absent. */
  logFile?: string
  /** Called with every redis-server process started, e.g. to kill it if the caller dies. */
  onSpawn?: (child: ChildProcess) => void
}

/**
 * A private `redis-server` (no persistence, its own folder) that a test or a bench may pause,
 * kill and restart (empty) to simulate an outage without touching the shared instance.
 */
export class PrivateRedis {
  readonly dir = mkdtempSync(join(tmpdir(), 'fg-redis-'))
  private child: ChildProcess | undefined
  private readonly log: WriteStream | undefined

  private constructor(
    readonly port: number,
    private readonly onSpawn: PrivateRedisOptions['onSpawn'],
    logFile: string | undefined,
  ) {
    this.log = logFile === undefined ? undefined : createWriteStream(logFile, { flags: 'a' })
  }

  /**
   * Starts a server and waits until it answers PING.
   * @throws {Error} when it exits or does not answer within `startTimeoutMs` (ms).
   */
  static async start(options: PrivateRedisOptions = {}): Promise<PrivateRedis> {
    const server = new PrivateRedis(options.port ?? (await freePort()), options.onSpawn, options.logFile)
    await server.start()
    return server
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** (Re)starts the server on the same port, empty, and waits until it answers PING. */
  async start(): Promise<void> {
    // noeviction is Redis's default, stated: the interaction streams must never be evicted
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']
    args.push('--maxmemory-policy', 'noeviction', '--dir', this.dir)
    const child = spawn('redis-server', args, {
      stdio: ['ignore', this.log ? 'pipe' : 'ignore', this.log ? 'pipe' : 'ignore'],
    })
    if (this.log) {
      child.stdout?.pipe(this.log, { end: false })
      child.stderr?.pipe(this.log, { end: false })
    }
    this.child = child
    this.onSpawn?.(child)
    const probe = new Redis(this.port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    probe.on('error', () => {}) // connection refused while the server boots is expected
    const answers = async () => {
      if (child.exitCode !== null)
        throw new Error(`redis-server on port ${this.port} exited (${child.exitCode})`)
      try {
        await probe.connect()
        return (await probe.ping()) === 'PONG'
      } catch {
        probe.disconnect()
        return false
      }
    }
    try {
      const { startTimeoutMs: timeoutMs, probeEveryMs: everyMs } = PRIVATE_REDIS_DEFAULTS
      await until(answers, { timeoutMs, everyMs, what: `redis-server on port ${this.port} answering PING` })
    } finally {
      probe.disconnect()
    }
  }

  /** Black-holes the server (SIGSTOP): connections stay open, nothing is answered. */
  pause(): void {
    this.child?.kill('SIGSTOP')
  }

  /** Undoes {@link pause} (SIGCONT). */
  resume(): void {
    this.child?.kill('SIGCONT')
  }

  /** Kills the server (SIGKILL: its data is gone, as in a crash) and waits for the process to exit. */
  async kill(): Promise<void> {
    const child = this.child
    this.child = undefined
    if (!child || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }

  /** Kills the server, removes its folder and closes its log. */
  async destroy(): Promise<void> {
    await this.kill()
    rmSync(this.dir, { recursive: true, force: true })
    this.log?.end()
  }
}
