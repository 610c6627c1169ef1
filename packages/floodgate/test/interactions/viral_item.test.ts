import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CountsReader } from '../../src/counters/read_counts.js'
import { restoreMembersOf } from '../../src/counters/rebuild.js'
import { MEMBER_BUCKET_DEFAULTS } from '../../src/interactions/defaults.js'
import { Interactions } from '../../src/interactions/interactions.js'
import { InteractionKeys } from '../../src/interactions/keys.js'
import { bucketKeys, countMembers, dropMembers, readGeometry } from '../../src/interactions/member_buckets.js'
import { playViewer } from '../../src/interactions/viewer.js'
import { PrivateRedis, privateRedisClient } from '../support/redis_server.js'

// One video with a viral number of likers on a PRIVATE, otherwise idle redis-server (SLOWLOG's
// threshold is a CONFIG SET, never done on the shared one): no single command touching it — the
// seeding restore, likes and unlikes, plays, counts, a restore after FLUSHALL, a replace-style
// repair and the delete (forget) — costs 10 ms or more of Redis time (see the note on SLOWLOG at
// the end), no key is over 1 MB, and a like costs at most 12 bytes. A million likers by default
// (~15 s on this 2-core box); FLOODGATE_VIRAL_LIKERS sets another number (10,000,000: ~7 min,
// run it with NODE_OPTIONS=--max-old-space-size=12000 for the test's id lists).
const LIKERS = Number(process.env.FLOODGATE_VIRAL_LIKERS ?? 1_000_000)
/** The test's budget (ms): seeding, restoring and re-seeding grow with the likers (~15 s a million). */
const TIMEOUT_MS = Math.max(180_000, LIKERS * 0.06)
const SLOWER_THAN_US = 10_000
const ITEM = '42'
const PREFIX = 'viral'
/** Restore steps in flight: the seeding is pipelined, not one round trip per step. */
const IN_FLIGHT = 64

let server: PrivateRedis
let redis: Redis
const keys = new InteractionKeys(PREFIX, 4)

beforeAll(async () => {
  server = await PrivateRedis.start()
  redis = await privateRedisClient(server, 30_000)
  await redis.config('SET', 'slowlog-log-slower-than', String(SLOWER_THAN_US))
  await redis.config('SET', 'slowlog-max-len', '10000')
}, 30_000)

afterAll(async () => {
  redis?.disconnect()
  await server?.destroy()
})

type SlowEntry = [number, number, number, string[]]

/** SLOWLOG entries since the last RESET: `{ micros, command }`, the command cut to 4 words. */
async function slowCommands(): Promise<{ micros: number; command: string }[]> {
  const log = (await redis.slowlog('GET', 10_000)) as SlowEntry[]
  return log.map((e) => ({ micros: e[2], command: e[3].slice(0, 4).join(' ') }))
}

/** Likers `from` … `from + n - 1` (ids past 2^31: 8-byte integers in the intsets, the worst case). */
const likers = (from: number, n: number) =>
  Array.from({ length: n }, (_, i) => String(3_000_000_000 + from + i))

/** Restores `users` in steps of maxMembersPerStep, IN_FLIGHT chunks at a time (`add`: order-free). */
async function seed(users: readonly string[]): Promise<void> {
  const chunk = Math.ceil(users.length / IN_FLIGHT)
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, (_, i) =>
      restoreMembersOf(
        { redis, keys, topK: 1000 },
        'likes',
        ITEM,
        users.slice(i * chunk, (i + 1) * chunk),
        'add',
      ),
    ),
  )
}

/** The redis-server main thread's CPU time so far (µs): `INFO cpu`, user + sys, never wall clock. */
async function mainThreadCpuMicros(): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1])
  return Math.round((field('used_cpu_user_main_thread') + field('used_cpu_sys_main_thread')) * 1e6)
}

/**
 * `redis` with every pipeline's `exec` run through {@link timed} as one `kind` step: a library call
 * made of many steps (forget, dropMembers) gets each step timed, not the whole walk.
 */
function stepTimed(kind: string): Redis {
  return new Proxy(redis, {
    get(target, prop) {
      const value = Reflect.get(target, prop)
      if (prop !== 'pipeline') return typeof value === 'function' ? value.bind(target) : value
      return (...args: Parameters<Redis['pipeline']>) => {
        const pipeline = target.pipeline(...args)
        const exec = pipeline.exec.bind(pipeline)
        pipeline.exec = () => timed(kind, exec)
        return pipeline
      }
    },
  })
}

/** Main-thread CPU (µs) of every step, per kind, from {@link timed}. */
const steps = new Map<string, number[]>()

/**
 * Runs `step` alone (nothing else in flight on this private server) and records the server's
 * main-thread CPU it cost, the INFO around it included (~0.1 ms: an overestimate).
 */
async function timed<T>(kind: string, step: () => Promise<T>): Promise<T> {
  const before = await mainThreadCpuMicros()
  const out = await step()
  const cpu = (await mainThreadCpuMicros()) - before
  steps.set(kind, [...(steps.get(kind) ?? []), cpu])
  return out
}

describe(`one video with ${LIKERS.toLocaleString('en')} likers`, () => {
  it('no step on it costs ≥ 10 ms of Redis time, no key over 1 MB, ≤ 12 B a like', {
    timeout: TIMEOUT_MS,
  }, async () => {
    await redis.slowlog('RESET')
    await redis.config('RESETSTAT')
    const all = likers(0, LIKERS)
    await seed(all)
    const geometry = await readGeometry(redis, keys, 'likes', ITEM)
    expect(geometry.count).toBe(LIKERS)

    // memory: every bucket and the meta, one MEMORY USAGE each (pipelined)
    const names = [...bucketKeys(keys, 'likes', ITEM, geometry), keys.memberMeta('likes', ITEM)]
    const pipeline = redis.pipeline()
    for (const k of names) pipeline.memory('USAGE', k)
    const usage = ((await pipeline.exec()) ?? []).map(([, v]) => Number(v))
    const bytes = usage.reduce((a, b) => a + b, 0)
    const largest = Math.max(...usage)
    console.info(
      `${LIKERS} likers: ${geometry.buckets} buckets, ${(bytes / LIKERS).toFixed(2)} B a like, largest key ${largest} B`,
    )
    expect(bytes / LIKERS).toBeLessThanOrEqual(12)
    expect(largest).toBeLessThanOrEqual(1024 * 1024)

    // likes, unlikes and plays through the library: each poll phase's 256 one script call
    const ix = new Interactions(redis, { prefix: PREFIX, partitions: 4 })
    const single = new Interactions(redis, { prefix: PREFIX, partitions: 4, maxEventsPerCall: 1 })
    const fresh = likers(LIKERS, 1024)
    await ix.setLiked(ITEM, '1', true) // scripts loaded: the EVAL of a NOSCRIPT is not a step here
    await ix.recordPlay(ITEM, playViewer({ userId: '1' }))
    await single.setLiked(ITEM, '1', false)
    for (let i = 0; i < 1024; i += 256) {
      const batch = fresh.slice(i, i + 256)
      await timed('like ×256', () => Promise.all(batch.map((u) => ix.setLiked(ITEM, u, true))))
      await timed('unlike ×256', () =>
        Promise.all(all.slice(i, i + 256).map((u) => ix.setLiked(ITEM, u, false))),
      )
      await timed('play ×256', () =>
        Promise.all(batch.map((u) => ix.recordPlay(ITEM, playViewer({ userId: u })))),
      )
      await timed('like, one call', () => single.setLiked(ITEM, all[i]!, true))
    }
    const reader = new CountsReader({ redis, prefix: PREFIX, partitions: 4, timeoutMs: 5000 })
    await redis.set(keys.epoch(), 'e1')
    const read = await timed('count read', () => reader.readCounts([ITEM], fresh[0]))
    const count = LIKERS + 1024 - 1024 + 4
    expect(read.ok && read.counts.get(ITEM)).toMatchObject({ likes: count, plays: 1025, liked: true })
    expect(await countMembers(redis, keys, 'likes', [ITEM])).toEqual([{ counted: count, held: count }])

    // a restore after a data loss: the rebuild's and restoreItem's steps (merge steps of ≤ 250
    // members, PostgreSQL not needed to time Redis' side), each timed alone
    await redis.flushall('ASYNC') // the loss itself (not a command of the library): freed in the background
    const members = [...all.slice(1024), ...all.slice(0, 1024).filter((_, i) => i % 256 === 0), ...fresh]
    expect(members.length).toBe(count)
    const per = MEMBER_BUCKET_DEFAULTS.maxMembersPerStep
    for (let i = 0; i < members.length; i += per) {
      const last = i + per >= members.length
      await timed('restore step (250)', () =>
        restoreMembersOf(
          { redis, keys, topK: 1000 },
          'likes',
          ITEM,
          members.slice(i, i + per),
          'merge',
          last,
        ),
      )
    }
    expect((await readGeometry(redis, keys, 'likes', ITEM)).count).toBe(count)
    // the rebuild's `replace`: its bounded UNLINKs, each timed
    await dropMembers(stepTimed('drop step'), keys, 'likes', ITEM)
    await seed(members)

    // the delete: every key of the video leaves, in steps, each timed
    const forgetting = new Interactions(stepTimed('forget step'), { prefix: PREFIX, partitions: 4 })
    const report = await forgetting.forget(ITEM)
    expect(report.unlinked).toBeGreaterThan(LIKERS / 256)
    expect(await redis.exists(keys.likes(ITEM), keys.memberMeta('likes', ITEM), keys.plays(ITEM))).toBe(0)

    // Redis' CPU per step, not SLOWLOG's wall clock: on this shared 2-core box (load 3-8 from
    // other benches, the test's client on the other core) a redis-server descheduled inside a
    // ~1 ms step logs it at 10-40 ms, with single SADDs of one member inside it at 10-27 ms,
    // impossible as work; SLOWLOG is printed, not asserted. CPU time has rarer outliers of its own
    // (10,000,000 likers, 40,001 restore steps: p50 1.3 ms, p99.9 3.6 ms, then a few at 4-11 ms
    // anywhere in the run, not growing with the item): with 1,000 steps or more of a kind its
    // 99.9th percentile is held to the bound and its worst to 2.5 times it.
    const table = [...steps].map(([kind, cpu]) => {
      const sorted = [...cpu].sort((a, b) => a - b)
      return { kind, steps: cpu.length, p999: sorted[Math.floor(cpu.length * 0.999)]!, max: sorted.at(-1)! }
    })
    console.table(table)
    const slow = await slowCommands()
    console.info(`SLOWLOG (wall clock ≥ 10 ms): ${slow.length} entries`, slow.slice(0, 5))
    for (const { kind, steps: n, p999, max } of table) {
      if (n < 1000) expect(max, kind).toBeLessThan(SLOWER_THAN_US)
      else {
        expect(p999, `${kind}, 99.9th percentile`).toBeLessThan(SLOWER_THAN_US)
        expect(max, `${kind}, worst`).toBeLessThan(2.5 * SLOWER_THAN_US)
      }
    }
  })
})
