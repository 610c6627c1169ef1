import { randomBytes } from 'node:crypto'
import type { RedisClient } from '../../../src/redis/index.js'
import { spawnWorker, type Worker } from '../../support/processes.js'

/** N cache worker processes sharing one prefix, driven by pub/sub commands. */
export class WorkerGroup {
  readonly workers: Worker[]

  constructor(
    private readonly redis: RedisClient,
    readonly prefix: string,
    count: number,
    config: Record<string, unknown>,
  ) {
    this.workers = Array.from({ length: count }, (_, i) =>
      spawnWorker(new URL('./cache_worker.ts', import.meta.url), [prefix, String(i), JSON.stringify(config)]),
    )
  }

  async ready(): Promise<void> {
    await Promise.all(
      this.workers.map((w) => w.waitFor((m) => (m as { event?: string }).event === 'ready', 60_000)),
    )
  }

  /** Publishes a command; resolves with one reply per addressed worker. */
  async send(command: Record<string, unknown>, replies = this.workers.length, timeoutMs = 30_000) {
    const id = randomBytes(4).toString('hex')
    await this.redis.publish(`${this.prefix}:cmd`, JSON.stringify({ ...command, id }))
    const targets = command.only === undefined ? this.workers : [this.workers[command.only as number]!]
    const answers = await Promise.all(
      targets
        .slice(0, replies)
        .map(
          (w) =>
            w.waitFor((m) => (m as { id?: string }).id === id, timeoutMs) as Promise<Record<string, unknown>>,
        ),
    )
    return answers
  }

  async stop(): Promise<void> {
    await this.redis.publish(`${this.prefix}:cmd`, JSON.stringify({ op: 'exit', id: 'exit' }))
    await Promise.all(
      this.workers.map(async (w) => {
        const timer = setTimeout(() => w.child.kill('SIGKILL'), 3000)
        await w.exited
        clearTimeout(timer)
      }),
    )
  }
}
