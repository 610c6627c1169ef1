import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, describe, expect, it } from 'vitest'
import { createInteractionFlush, InteractionKeys } from '../../src/interactions/index.js'
import { spawnWorker, type Worker } from '../support/processes.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'
import { waitDrained } from './drain.js'
import { createTestSchema } from './pg_schema.js'
import { compareRedisWithDatabase } from './verify.js'

const OPS = Number(process.env.FG_CRASH_OPS ?? 50_000)
const PRODUCERS = 3
const VIDEOS = 60
const USERS = 300
const PARTITIONS = 4
const KILLS = 10

const OPS_OVERLAP = Number(process.env.FG_CRASH_OPS_OVERLAP ?? 20_000)
/**
 * Producers are paced to spread their `ops` over about this long (s), and keep producing until the
 * test sets the stop key after the last kill: every kill falls while events are being produced,
 * however slowly the flushers restart on a loaded machine.
 */
const PRODUCTION_S = 18

const redis = testRedisClient(5000)
const producerFile = new URL('./workers/producer.ts', import.meta.url)
const flusherFile = new URL('./workers/flusher.ts', import.meta.url)

afterAll(() => {
  redis.disconnect()
})

/**
 * Producers run `ops` operations while the flushing process is SIGKILLed `KILLS` times at random
 * moments and restarted (a new consumer name each time, so its predecessor's pending entries are
 * claimed after the idle time). With `stableConsumer`, a second consumer runs in this process the
 * whole time: claims then race with a live consumer and batches for the same keys overlap.
 */
async function scenario(ops: number, stableConsumer: boolean) {
  const prefix = uniquePrefix('ix-crash')
  const schema = await createTestSchema('crash', VIDEOS)
  const keys = new InteractionKeys(prefix, PARTITIONS)
  const stopKey = `${prefix}:producers-stop`
  const startFlusher = (): Worker =>
    spawnWorker(flusherFile, [prefix, String(PARTITIONS), schema.name, '500', '400', '5'])
  try {
    const producers = Array.from({ length: PRODUCERS }, (_, i) =>
      spawnWorker(producerFile, [
        prefix,
        String(PARTITIONS),
        String(VIDEOS),
        String(USERS),
        String(Math.ceil(ops / PRODUCERS)),
        '16',
        String(1234 + i),
        '200',
        String(Math.ceil(ops / PRODUCERS / PRODUCTION_S)),
        stopKey,
      ]),
    )
    let flusher = startFlusher()
    const claimed: number[] = []
    const collect = (w: Worker) => {
      for (const m of w.messages as { claimed?: number }[]) if (m.claimed) claimed.push(m.claimed)
    }
    let kills = 0
    const producersDone = Promise.all(
      producers.map((p) => p.waitFor((m) => (m as { done?: boolean }).done === true, 120_000)),
    )
    let finished = false
    void producersDone.then(() => {
      finished = true
    })
    const watcher = createInteractionFlush(redis, schema.db, {
      prefix,
      partitions: PARTITIONS,
      batchSize: 500,
      claimIdleMs: 400,
      claimIntervalMs: 100,
      blockMs: 200,
    })
    if (stableConsumer) watcher.start()
    let killsDuringProduction = 0
    // entries a killed flusher had read and not acknowledged: only a claim can deliver them again
    let orphaned = 0
    const pendingOf = async (pid: number | undefined) => {
      let count = 0
      for (let p = 0; p < PARTITIONS; p++) {
        const summary = (await redis.xpending(keys.stream(p), 'flush').catch(() => null)) as
          | [number, string | null, string | null, [string, string][] | null]
          | null
        for (const [consumer, n] of summary?.[3] ?? []) if (consumer.includes(`-${pid}-`)) count += Number(n)
      }
      return count
    }
    await flusher.waitFor((m) => (m as { ready?: boolean }).ready === true)
    while (kills < KILLS) {
      // a random moment while it is flushing: 100–700 ms after it became ready
      await sleep(100 + Math.random() * 600)
      if (!finished) killsDuringProduction++
      flusher.child.kill('SIGKILL')
      await flusher.exited
      orphaned += await pendingOf(flusher.child.pid)
      collect(flusher)
      kills++
      flusher = startFlusher()
      await flusher.waitFor((m) => (m as { ready?: boolean }).ready === true)
    }
    await redis.set(stopKey, '1')
    const results = (await producersDone) as { events: number; playEventIds: string[] }[]
    // the last flusher and the in-process consumer drain what is left
    watcher.start()
    await waitDrained(watcher, 60_000)
    await watcher.stop()
    flusher.child.kill('SIGTERM')
    await flusher.exited
    collect(flusher)

    const events = results.reduce((sum, r) => sum + r.events, 0)
    const playIds = results.flatMap((r) => r.playEventIds)
    expect(events).toBeGreaterThan(ops / 3)
    expect(kills).toBe(KILLS)
    expect(killsDuringProduction).toBe(KILLS)
    // a kill between batches leaves nothing to claim; a kill mid-batch must be claimed
    if (orphaned > 0) expect(claimed.reduce((a, b) => a + b, 0) + watcher.stats.claimed).toBeGreaterThan(0)

    expect(await compareRedisWithDatabase(redis, schema.pool, keys, VIDEOS)).toEqual([])
    const { rows } = await schema.pool.query('SELECT event_id FROM item_plays')
    const logged = rows.map((r: { event_id: string }) => r.event_id).sort()
    expect(logged.length).toBe(playIds.length)
    expect(logged).toEqual([...playIds].sort())
    for (let p = 0; p < PARTITIONS; p++) expect(await redis.xlen(keys.dead(p))).toBe(0)
    return {
      events,
      kills,
      killsDuringProduction,
      orphaned,
      claimed: claimed.reduce((a, b) => a + b, 0) + watcher.stats.claimed,
    }
  } finally {
    await deleteByPrefix(redis, prefix)
    await schema.drop()
  }
}

describe('flush under SIGKILL (test 3)', () => {
  it(`keeps PostgreSQL equal to Redis after ${KILLS} kills of the flushing process during ${OPS} operations`, async () => {
    const outcome = await scenario(OPS, false)
    console.log('single consumer', outcome)
  }, 150_000)

  it(`same with a second, live consumer claiming and overlapping (${OPS_OVERLAP} operations)`, async () => {
    const outcome = await scenario(OPS_OVERLAP, true)
    console.log('two consumers', outcome)
  }, 150_000)
})
