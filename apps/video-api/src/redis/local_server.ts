import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync } from 'node:fs'
import { createConnection } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { VideoApiError } from '../errors/index.js'

/** `redis-server` is not installed and no Redis answers. `code`: `VIDEO_API_REDIS_SERVER_MISSING`. */
export class RedisServerMissingError extends VideoApiError {
  constructor() {
    super(
      'VIDEO_API_REDIS_SERVER_MISSING',
      'No Redis answers at 127.0.0.1:6379 and redis-server is not on PATH. ' +
        'Install one (Debian/Ubuntu: `sudo apt-get install redis-server`; macOS: `brew install redis`) ' +
        'or point REDIS_URL at a running Redis, e.g. REDIS_URL=redis://host:6379.',
    )
  }
}

/** True when something accepts TCP connections at host:port within `timeoutMs` (ms). */
export function portAnswers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(timeoutMs, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

export interface LocalRedis {
  url: string
  /** Stops the server (SIGTERM: it flushes its AOF) and waits for it to exit. */
  stop(): Promise<void>
}

/**
 * Starts `redis-server` on 127.0.0.1:`port` with its own data folder
 * `<dataDir>/redis` and an append-only file (`--appendonly yes
 * --appendfsync everysec`), and waits until it accepts connections.
 * @param command the server binary, looked up on PATH. @default 'redis-server'
 * @throws {RedisServerMissingError} when `command` is not on PATH.
 */
export async function startLocalRedis(
  dataDir: string,
  port = 6379,
  command = 'redis-server',
): Promise<LocalRedis> {
  const dir = join(dataDir, 'redis')
  mkdirSync(dir, { recursive: true })
  const child: ChildProcess = spawn(
    command,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--maxmemory-policy',
      'noeviction',
    ],
    { stdio: 'ignore' },
  )
  const failed = new Promise<Error>((resolve) => child.once('error', resolve))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  for (let i = 0; i < 100; i++) {
    const outcome = await Promise.race([failed, portAnswers('127.0.0.1', port).then((ok) => ok)])
    if (outcome instanceof Error) {
      if ((outcome as NodeJS.ErrnoException).code === 'ENOENT') throw new RedisServerMissingError()
      throw outcome
    }
    if (outcome) {
      // Never leave the server behind, even if the process dies without a clean shutdown.
      const onExit = () => child.kill('SIGTERM')
      process.once('exit', onExit)
      return {
        url: `redis://127.0.0.1:${port}`,
        async stop() {
          process.removeListener('exit', onExit)
          if (child.exitCode === null && child.signalCode === null) {
            child.kill('SIGTERM')
            await exited
          }
        },
      }
    }
    await sleep(50)
  }
  child.kill('SIGKILL')
  throw new Error(`redis-server on port ${port} did not start within 5 s`)
}
