import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { floodgateRedisOptions } from '../../src/redis/index.js'

export { freePort }

/**
 * A private `redis-server` on its own port that a test may stop, kill and
 * restart to simulate an outage without touching the shared instance.
 */
export class PrivateRedis {
  readonly port: number
  readonly dir: string
  private child: ChildProcess | undefined

  private constructor(port: number) {
    this.port = port
    this.dir = mkdtempSync(join(tmpdir(), 'fg-redis-'))
  }

  static async start(): Promise<PrivateRedis> {
    const server = new PrivateRedis(await freePort())
    await server.start()
    return server
  }

  /** A server on a given free `port` (e.g. one a client already points at, for a late start). */
  static async startOn(port: number): Promise<PrivateRedis> {
    const server = new PrivateRedis(port)
    await server.start()
    return server
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  /** Starts (or restarts) the server on the same port and waits until it answers PING. */
  async start(): Promise<void> {
    this.child = spawn(
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
        '--dir',
        this.dir,
      ],
      { stdio: 'ignore' },
    )
    const probe = new Redis(this.port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    probe.on('error', () => {}) // connection refused while the server boots is expected
    try {
      for (let i = 0; i < 100; i++) {
        try {
          await probe.connect()
          await probe.ping()
          return
        } catch {
          probe.disconnect()
          await sleep(50)
        }
      }
      throw new Error(`redis-server on port ${this.port} did not start`)
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

  /** Kills the server (SIGKILL: no clean shutdown) and waits for the process to exit. */
  async kill(): Promise<void> {
    const child = this.child
    if (!child || child.exitCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    this.child = undefined
  }

  /** Kills the server and removes its folder. */
  async destroy(): Promise<void> {
    await this.kill()
    rmSync(this.dir, { recursive: true, force: true })
  }
}

/**
 * A client on `server` with floodgate's production options (errors ignored: tests kill the
 * server), resolved once it is ready. @throws {Error} when it is not ready within 5 s.
 */
export async function privateRedisClient(server: PrivateRedis, commandTimeoutMs = 5000): Promise<Redis> {
  const redis = new Redis(server.url, floodgateRedisOptions({ commandTimeoutMs }))
  redis.on('error', () => undefined)
  for (let i = 0; i < 100 && redis.status !== 'ready'; i++) await sleep(50)
  if (redis.status !== 'ready') throw new Error(`client on port ${server.port} not ready`)
  return redis
}
