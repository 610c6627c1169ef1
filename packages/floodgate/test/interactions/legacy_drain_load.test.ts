import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  InteractionKeys,
  type LegacyDrainEvent,
  LegacyInteractionKeys,
  startLegacyLayoutDrain,
} from '../../src/index.js'
import { countMembers, readMembers } from '../../src/interactions/member_buckets.js'
import { seedMembers } from '../counters/pg_schema.js'
import {
  lastAnswersThatFail,
  spawnToggler,
  startFlush,
  startTogglerFixture,
  stopTogglerFixture,
  stopTogglers,
  type TogglerFixture,
} from '../counters/toggler_fixture.js'
import { prng } from '../support/prng.js'
import { uniquePrefix } from '../support/redis.js'
import { waitDrained } from './drain.js'

// Issue 25, migration: a deployment on interaction layout 1 (one SET per item, 16 partitions,
// events still in its streams) upgrades while 4 service processes of the new version like and
// unlike the same items through the current library: the legacy drain applies the old streams,
// the recovery rebuilds layout 2 once they are gone, and it ends with every membership and count
// of layout 2 equal to PostgreSQL and every user's last answer holding. A private redis-server:
// the layout-1 marker `<prefix>:epoch` and SCANs stay off the shared one.
const ITEMS = 8
const DB_LIKERS = 300 // per item, in PostgreSQL and the layout-1 SET before the upgrade
const EVENTS = 1500 // per item, in the layout-1 stream, not yet applied
const USERS = [1000, 3000] // the user range of the legacy events and of the workers' toggles
const WORKERS = 4
const AFTER_MS = 3000
const prefix = uniquePrefix('legacyload')
const keys = new InteractionKeys(prefix, 4)
const legacy = new LegacyInteractionKeys(prefix, 4)
let f: TogglerFixture

beforeAll(async () => {
  f = await startTogglerFixture('legacyload', ITEMS)
}, 30_000)

afterAll(() => stopTogglerFixture(f))

/** Layout 1 as a running deployment leaves it: SETs, unapplied events (toggle-4.lua's), the marker. */
async function seedLayout1(): Promise<void> {
  const redis = f.redis
  const next = prng(7)
  const random = (n: number) => Math.floor(next() * n)
  const t = Date.now() - 60_000
  for (let item = 1; item <= ITEMS; item++) {
    const likers = Array.from({ length: DB_LIKERS }, (_, i) => USERS[0]! + i * 5)
    await seedMembers(f.schema.db, 'likes', item, likers)
    const set = new Set(likers.map(String))
    const stream = legacy.stream(item % legacy.partitions)
    const pipeline = redis.pipeline()
    pipeline.xgroup('CREATE', stream, 'flush', '0', 'MKSTREAM')
    for (let e = 0; e < EVENTS; e++) {
      const user = String(USERS[0]! + random(USERS[1]! - USERS[0]!))
      const on = random(2) === 1
      if (set.has(user) === on) continue // unchanged: toggle-4.lua appends nothing
      if (on) set.add(user)
      else set.delete(user)
      pipeline.xadd(
        stream,
        '*',
        'k',
        'like',
        'v',
        String(item),
        'u',
        user,
        's',
        on ? '1' : '0',
        't',
        String(t + e),
      )
    }
    pipeline.sadd(`${prefix}:ix:{ix:${item % legacy.partitions}}:likes:${item}`, ...set)
    await pipeline.exec()
  }
  await redis.set(legacy.epoch(), 'old')
}

describe('migration from layout 1 under load', () => {
  it('ends on layout 2 with every membership and count equal to PostgreSQL', async () => {
    const t0 = Date.now()
    const redis = f.redis
    await seedLayout1()
    const legacyEvents = (
      await Promise.all(legacy.allPartitions().map((p) => redis.xlen(legacy.stream(p))))
    ).reduce((a, b) => a + b, 0)
    expect(legacyEvents).toBeGreaterThan(ITEMS * EVENTS * 0.3)

    // the new version's instances start: layout 2 has no marker, so toggles restore their item first
    const items = Array.from({ length: ITEMS }, (_, i) => String(i + 1))
    await Promise.all(
      Array.from({ length: WORKERS }, (_, w) => {
        const mine: number[] = []
        for (let u = USERS[0]! + w; u < USERS[1]!; u += WORKERS) mine.push(u)
        return spawnToggler(f, prefix, items, mine, w + 1)
      }),
    )
    await sleep(500) // toggles before the drain starts too: a rolling deploy's first instance

    const flush = startFlush(f, prefix)
    const drainEvents: LegacyDrainEvent['type'][] = []
    const drainStarted = Date.now()
    const drain = startLegacyLayoutDrain(redis, f.schema.db, {
      prefix,
      partitions: 4,
      blockMs: 50,
      claimIdleMs: 1000,
      batchSize: 200, // small batches: the drain lasts while the workers toggle
      checkIntervalMs: 100,
      onDrainEvent: (e) => void drainEvents.push(e.type),
    })
    let v2: string | null = null
    while ((!drainEvents.includes('cleaned') || v2 === null) && Date.now() - drainStarted < 40_000) {
      await sleep(50)
      v2 = await redis.get(keys.epoch())
    }
    const migratedMs = Date.now() - drainStarted
    await sleep(AFTER_MS)
    const done = await stopTogglers(f)
    await waitDrained(flush)
    await drain.stop()
    await flush.stop()

    const during = done.map(
      (d) => d.acks.filter((a) => a[4] > drainStarted && a[4] < drainStarted + migratedMs).length,
    )
    console.log(
      JSON.stringify({
        legacyEvents,
        migratedMs,
        totalMs: Date.now() - t0,
        toggles: done.map((d) => d.acks.length),
        during,
        errors: done.map((d) => [d.errors, d.restoreErrors]),
        drainEvents: [...new Set(drainEvents)],
      }),
    )
    expect(drainEvents).not.toContain('error')
    expect(drainEvents).toContain('cleaned')
    expect(v2).not.toBeNull()
    // toggles were in flight all along: a restore waits for the legacy streams to drain (its item's
    // events are not in PostgreSQL before), then they run while layout 2 is rebuilt, and after
    expect(during.reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
    expect(done.every((d) => d.acks.length > 100)).toBe(true)

    // on layout 2 only: no legacy key left but the dead letters
    const left = (await redis.keys(`${prefix}:*`)).filter((k) => legacy.legacyPartitionOf(k) !== undefined)
    expect(left.filter((k) => !k.endsWith(':dead'))).toEqual([])
    expect(await redis.exists(legacy.epoch())).toBe(0)

    // every item: layout-2 members == PostgreSQL rows; counted == held == rows == count column
    const { rows } = await f.schema.db.query<{ v: string; u: string }>(
      'SELECT item_id::text AS v, user_id::text AS u FROM item_likes',
    )
    const { rows: columns } = await f.schema.db.query<{ id: string; n: string }>(
      'SELECT id::text AS id, like_count::text AS n FROM items',
    )
    const problems: string[] = []
    const inDb = new Map<string, Set<string>>()
    for (const r of rows) inDb.set(r.v, (inDb.get(r.v) ?? new Set()).add(r.u))
    for (let item = 1; item <= ITEMS; item++) {
      const id = String(item)
      const db = inDb.get(id) ?? new Set<string>()
      const members = await readMembers(redis, keys, 'likes', id)
      const [count] = await countMembers(redis, keys, 'likes', [id])
      const column = Number(columns.find((c) => c.id === id)!.n)
      if (count!.counted !== db.size || count!.held !== db.size || column !== db.size)
        problems.push(
          `item ${id}: counted ${count!.counted}, held ${count!.held}, column ${column}, rows ${db.size}`,
        )
      const extra = members.filter((u) => !db.has(u))
      const missing = [...db].filter((u) => !members.includes(u))
      if (extra.length + missing.length > 0)
        problems.push(
          `item ${id}: in Redis only ${extra.slice(0, 5)} (${extra.length}), in PostgreSQL only ${missing.slice(0, 5)} (${missing.length})`,
        )
    }
    // every (item, user)'s last acknowledged answer holds
    const liked = (item: string, user: string) => inDb.get(item)?.has(user) ?? false
    const answers = lastAnswersThatFail(done, liked, drainStarted)
    problems.push(...answers.wrong)
    expect(problems.slice(0, 20)).toEqual([])
    expect(answers.checked).toBeGreaterThan(1000)
  }, 120_000)
})
