import type { ChildProcess } from 'node:child_process'
import type { Redis } from 'ioredis'
import { createInteractionFlush } from '../../src/index.js'
import type { StreamGroupConsumer } from '../../src/stream/index.js'
import { spawnWorker, type Worker } from '../support/processes.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'
import { type CountersSchema, createCountersSchema } from './pg_schema.js'

/**
 * What `workers/viral_toggler.ts` records per answer: item, user, desired (1/0), answered active
 * (1/0, or -1 when the call failed), ack time (ms), restored first (1/0).
 */
export type TogglerAck = [string, string, number, number, number, number]

/** The `done` report of a `workers/viral_toggler.ts` process. */
export interface TogglerDone {
  acks: TogglerAck[]
  errors: number
  restoreErrors: number
  restoreMs: number[]
  events: string[]
  rebuiltRows: number
}

/** A private redis-server (SLOWLOG's threshold, FLUSHALL and SCANs stay off the shared one), a schema, the togglers. */
export interface TogglerFixture {
  server: PrivateRedis
  redis: Redis
  schema: CountersSchema
  workers: Worker[]
}

/** Starts the server (`onSpawn` sees its process) and a schema of items 1…`items`. */
export async function startTogglerFixture(
  label: string,
  items: number,
  onSpawn?: (child: ChildProcess) => void,
): Promise<TogglerFixture> {
  const server = await PrivateRedis.start({ onSpawn })
  const redis = await privateRedisClient(server, 30_000)
  const schema = await createCountersSchema(label, items)
  return { server, redis, schema, workers: [] }
}

/** Kills what is left of the togglers, stops the server, drops the schema. */
export async function stopTogglerFixture(f: TogglerFixture | undefined): Promise<void> {
  for (const w of f?.workers ?? []) if (w.child.exitCode === null) w.child.kill('SIGKILL')
  f?.redis.disconnect()
  await f?.server.destroy()
  await f?.schema.drop()
}

/** The flush of layout 2 (4 partitions) into the fixture's schema, started: `blockMs` 50 so a test drains fast. */
export function startFlush(f: TogglerFixture, prefix: string): StreamGroupConsumer {
  const flush = createInteractionFlush(f.redis, f.schema.db, {
    prefix,
    partitions: 4,
    blockMs: 50,
    claimIdleMs: 1000,
  })
  flush.start()
  return flush
}

/** Spawns one toggler on `items` with its own `users`, and waits until it is ready. */
export async function spawnToggler(
  f: TogglerFixture,
  prefix: string,
  items: readonly string[],
  users: readonly (string | number)[],
  seed: number,
): Promise<Worker> {
  const file = new URL('./workers/viral_toggler.ts', import.meta.url)
  const args = [f.server.url, prefix, f.schema.name, items.join(','), users.join(','), '60000', String(seed)]
  const worker = spawnWorker(file, args)
  f.workers.push(worker)
  await worker.waitFor((m) => (m as { ready?: boolean }).ready === true)
  return worker
}

/** Stops every toggler (SIGTERM: in-flight calls end first) and returns their reports. */
export async function stopTogglers(f: TogglerFixture): Promise<TogglerDone[]> {
  for (const w of f.workers) w.child.kill('SIGTERM')
  return (await Promise.all(
    f.workers.map((w) => w.waitFor((m) => (m as { done?: boolean }).done === true, 30_000)),
  )) as TogglerDone[]
}

/**
 * Each (item, user)'s last acknowledged answer against PostgreSQL (`liked`): the answers that do
 * not hold (an unlike undone, a like lost, an answer other than asked), and how many were checked.
 * A pair whose last call failed is skipped: either state is right.
 */
export function lastAnswersThatFail(
  done: readonly TogglerDone[],
  liked: (item: string, user: string) => boolean,
  since: number,
): { wrong: string[]; checked: number } {
  const wrong: string[] = []
  let checked = 0
  for (const d of done) {
    const last = new Map<string, TogglerAck>()
    for (const a of d.acks) last.set(`${a[0]}:${a[1]}`, a)
    for (const [item, user, desired, active, at, restored] of last.values()) {
      if (active < 0) continue
      checked++
      if (active !== desired || liked(item, user) !== (active === 1))
        wrong.push(
          `item ${item} user ${user}: asked ${desired}, answered ${active} at ${at - since} ms (restored first: ${restored}), in PostgreSQL: ${liked(item, user)}`,
        )
    }
  }
  return { wrong, checked }
}
