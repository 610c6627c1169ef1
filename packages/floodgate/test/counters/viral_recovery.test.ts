import { availableParallelism, loadavg, setPriority } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CountsRecovery, InteractionKeys } from '../../src/index.js'
import { countMembers, readMembers } from '../../src/interactions/member_buckets.js'
import { waitDrained } from '../interactions/drain.js'
import { uniquePrefix } from '../support/redis.js'
import { seedMembers } from './pg_schema.js'
import {
  lastAnswersThatFail,
  spawnToggler,
  startFlush,
  startTogglerFixture,
  stopTogglerFixture,
  stopTogglers,
  type TogglerFixture,
} from './toggler_fixture.js'

// Issue 25: a viral item loses its Redis state while 4 service processes like and unlike it.
// Recovery (the bulk rebuild of one process, the on-demand restoreItem of every process before
// its toggles) must put its 150,000 likers back in bounded steps while the toggles go on, and end
// with Redis == PostgreSQL and every user's last answer holding. Two windows the durability notes
// (src/counters/README.md) document are kept out of the loss moment on purpose: events not yet
// flushed when Redis goes (lost without persistence) and toggles of an instance that has not yet
// noticed the loss; so the workers pause, the flush drains, FLUSHALL, and each worker checks the
// marker before it resumes. Everything after the loss runs concurrently.
const LIKERS = 150_000
const ITEM = '7'
const FIRST_LIKER = 1_000_000
const WORKERS = 4
/** Toggles go on this long after the item's recovery committed (ms). */
const AFTER_MS = 4000
const SLOWER_THAN_US = 10_000
const prefix = uniquePrefix('viral')
const keys = new InteractionKeys(prefix, 4)
let f: TogglerFixture

beforeAll(async () => {
  // SLOWLOG is wall-clock: on this shared 2-core box (load 6–19) a descheduled redis-server logs a
  // one-member SADD at 15 ms; a higher priority for it (root only) keeps what is logged Redis's own time
  f = await startTogglerFixture('viral', 10, (child) => raisePriority(child.pid))
}, 30_000)

afterAll(() => stopTogglerFixture(f))

function raisePriority(pid: number | undefined): void {
  try {
    if (pid !== undefined) setPriority(pid, -15)
  } catch {
    // not root: the SLOWLOG check below may then see the box's load
  }
}

/** Worker w's users: 60 seeded likers spread over the whole range (disjoint per worker), 60 new ones. */
function usersOf(w: number): string[] {
  const stride = Math.floor(LIKERS / (60 * WORKERS))
  const seeded = Array.from({ length: 60 }, (_, k) => String(FIRST_LIKER + (k * WORKERS + w) * stride))
  const fresh = Array.from({ length: 60 }, (_, k) => String(5_000_000 + w * 1000 + k))
  return [...seeded, ...fresh]
}

async function dbLikers(): Promise<{ rows: string[]; column: number }> {
  const { rows } = await f.schema.db.query<{ u: string }>(
    'SELECT user_id::text AS u FROM item_likes WHERE item_id = $1',
    [ITEM],
  )
  const { rows: item } = await f.schema.db.query<{ n: string }>(
    'SELECT like_count::text AS n FROM items WHERE id = $1',
    [ITEM],
  )
  return { rows: rows.map((r) => r.u), column: Number(item[0]!.n) }
}

describe('a viral item loses its Redis data while 4 processes like and unlike it', () => {
  it('restores its members in bounded steps; Redis == PostgreSQL, every last answer holds', async () => {
    const t0 = Date.now()
    const redis = f.redis
    const workers = f.workers
    const all = Array.from({ length: LIKERS }, (_, i) => FIRST_LIKER + i)
    await seedMembers(f.schema.db, 'likes', Number(ITEM), all)
    // Redis from PostgreSQL through the library's bulk path (the rebuild), as a deployment's first start
    const seeder = new CountsRecovery({ redis, sql: f.schema.db, prefix, partitions: 4 })
    expect(await seeder.waitUntilServing(60_000)).toBe(true)
    expect(await countMembers(redis, keys, 'likes', [ITEM])).toEqual([{ counted: LIKERS, held: LIKERS }])
    const seededMs = Date.now() - t0

    const flush = startFlush(f, prefix)
    await redis.config('SET', 'slowlog-log-slower-than', String(SLOWER_THAN_US))
    await redis.config('SET', 'slowlog-max-len', '10000')
    await redis.slowlog('RESET')
    await Promise.all(
      Array.from({ length: WORKERS }, (_, w) => spawnToggler(f, prefix, [ITEM], usersOf(w), w + 1)),
    )
    await sleep(3000)

    // the loss: no toggle in flight, nothing left unflushed, then FLUSHALL and every worker told
    for (const w of workers) w.child.kill('SIGUSR1')
    await Promise.all(workers.map((w) => w.waitFor((m) => (m as { paused?: boolean }).paused === true)))
    await waitDrained(flush)
    const lostAt = Date.now()
    await redis.flushall()
    for (const w of workers) w.child.kill('SIGUSR2')
    const resumed = (await Promise.all(
      workers.map((w) => w.waitFor((m) => (m as { resumed?: boolean }).resumed === true)),
    )) as { serving: boolean }[]
    expect(resumed.map((r) => r.serving)).toEqual([false, false, false, false])

    // the rebuild commits the marker again (one worker holds the lock); toggles go on a while
    let back = false
    while (!back && Date.now() - lostAt < 45_000) {
      back = (await redis.get(keys.epoch())) !== null
      await sleep(50)
    }
    const recoveredMs = Date.now() - lostAt
    await sleep(AFTER_MS)
    const done = await stopTogglers(f)
    await waitDrained(flush)
    await flush.stop()
    const slow = (await redis.slowlog('GET', 10_000)) as [number, number, number, string[]][]
    const firstAfter = done.map((d) => (d.acks.find((a) => a[4] > lostAt)?.[4] ?? 0) - lostAt)
    const after = done.map((d) => d.acks.filter((a) => a[4] > lostAt).length)
    const whileRestoring = done.reduce(
      (s, d) => s + d.acks.filter((a) => a[4] > lostAt && a[5] === 1).length,
      0,
    )
    const base = keys.members('likes', ITEM)
    const touching = slow.filter((e) => e[3].some((arg) => arg.startsWith(base)))
    // the figures, before any assertion: a red run shows them too
    console.log(
      JSON.stringify({
        seededMs,
        lostAtMs: lostAt - t0,
        recoveredMs,
        totalMs: Date.now() - t0,
        firstToggleAfterLossMs: firstAfter,
        restoreMs: done.map((d) => Math.max(0, ...d.restoreMs)),
        toggles: done.map((d) => d.acks.length),
        after,
        whileRestoring,
        errors: done.map((d) => [d.errors, d.restoreErrors]),
        rebuilt: done.map((d) => d.rebuiltRows),
        load: loadavg()[0],
        slowlog: slow.map((e) => `${e[2]}us ${e[3].slice(0, 4).join(' ').slice(0, 160)}`),
      }),
    )

    // every worker toggled after the loss, some of it before the item was back (restoreItem first)
    expect(after.every((n) => n > 50)).toBe(true)
    // a toggle waits for its item's restore: one per process, not one per toggle (21–45 s here when
    // each of the 16 in-flight toggles walked all 150,000 members itself)
    expect(Math.max(...firstAfter)).toBeLessThan(15_000)
    expect(whileRestoring).toBeGreaterThan(0)
    expect(done.every((d) => d.events.includes('epoch-missing'))).toBe(true)
    const rebuilds = done.filter((d) => d.rebuiltRows >= 0)
    expect(rebuilds.length).toBeGreaterThanOrEqual(1)

    // Redis == PostgreSQL: members, the counted and the held number, the count column
    const db = await dbLikers()
    const members = await readMembers(redis, keys, 'likes', ITEM)
    const [count] = await countMembers(redis, keys, 'likes', [ITEM])
    expect(db.column).toBe(db.rows.length)
    expect(count).toEqual({ counted: db.rows.length, held: db.rows.length })
    const inRedis = new Set(members)
    const inDb = new Set(db.rows)
    expect(members.length).toBe(inRedis.size)
    expect(db.rows.filter((u) => !inRedis.has(u))).toEqual([])
    expect(members.filter((u) => !inDb.has(u))).toEqual([])

    // every user's last acknowledged answer holds (no unlike undone, no like lost)
    const answers = lastAnswersThatFail(done, (_, user) => inDb.has(user), lostAt)
    expect(answers.wrong).toEqual([])
    expect(answers.checked).toBeGreaterThan(WORKERS * 100)

    // no Redis command touching the item took 10 ms or more (the test's own FLUSHALL aside)
    // Strict on a box that is not overloaded. SLOWLOG is wall-clock: at a 1-min load above the
    // cores even the raised priority leaves a stray 10–15 ms entry now and then (a one-member SADD
    // was logged at 15 ms), so a loaded run allows 2 entries under 25 ms; the one-call restore
    // this replaced logs 44 ms–2.4 s steps.
    const loaded = loadavg()[0]! > availableParallelism()
    const over = touching.filter((e) => !loaded || e[2] >= 25_000)
    expect(over.map((e) => `${e[2]}us ${e[3].slice(0, 6).join(' ')}`)).toEqual([])
    expect(touching.length).toBeLessThanOrEqual(loaded ? 2 : 0)
  }, 120_000)
})
