import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { deleteByPrefix, freePort } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { spawnTs } from './spawn_ts.js'

/** A video-api process (apps/video-api/src/main.ts) a bench started. */
export interface VideoApiProcess {
  port: number
  child: ChildProcess
  /** SIGTERM, wait for the exit, then delete every key under its prefix. */
  stop(): Promise<void>
}

/**
 * Starts video-api on a free port against `db` and `redis` under `prefix`, with no seeding and
 * `env` over the bench defaults, and resolves once it listens and its Bloom filter is loaded.
 * @throws {Error} with the service's log when it is not ready within 90 s or exits.
 */
export async function startVideoApi(options: {
  db: string
  redis: string
  prefix: string
  env?: NodeJS.ProcessEnv
}): Promise<VideoApiProcess> {
  const port = await freePort()
  const child = spawnTs(new URL('../../apps/video-api/src/main.ts', import.meta.url), [], {
    cwd: fileURLToPath(new URL('../../', import.meta.url)),
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: options.db,
      REDIS_URL: options.redis,
      REDIS_PREFIX: options.prefix,
      SEED_ON_EMPTY: 'false',
      LOG_LEVEL: 'info', // the readiness lines below are info
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let log = ''
  for (const stream of [child.stdout, child.stderr])
    stream?.on('data', (chunk: Buffer) => {
      log += chunk.toString()
    })
  const deadline = Date.now() + 90_000
  while (!(log.includes('Server listening') && /bloom filter rebuilt|rebuild running elsewhere/.test(log))) {
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL')
      throw new Error(`video-api did not start:\n${log}`)
    }
    await sleep(200)
  }
  return {
    port,
    child,
    async stop() {
      child.kill('SIGTERM')
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve))
      const redis = new Redis(options.redis)
      await deleteByPrefix(redis, options.prefix)
      redis.disconnect()
    },
  }
}
