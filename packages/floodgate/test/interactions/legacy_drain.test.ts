import { setTimeout as sleep } from 'node:timers/promises'
import { forEachKeyPage } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CountsRecovery,
  createInteractionFlush,
  InteractionKeys,
  LegacyInteractionKeys,
  startLegacyLayoutDrain,
} from '../../src/index.js'
import { dropDrainedStreamScript } from '../../src/interactions/legacy_drain.js'
import { toMember } from '../../src/rankings/member.js'
import { type CountersSchema, createCountersSchema } from '../counters/pg_schema.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// Upgrading a deployment from interaction layout 1 (16 partitions tagged {ix:<p>}, marker
// <prefix>:epoch): the events still in its streams reach PostgreSQL before layout 2 is rebuilt
// from it, the streams go once drained, then the layout-1 keys; the dead letters stay.
const redis = testRedisClient()
const prefix = uniquePrefix('legacy')
const legacy = new LegacyInteractionKeys(prefix)
const keys = new InteractionKeys(prefix, 4)
let schema: CountersSchema

beforeAll(async () => {
  schema = await createCountersSchema('legacy', 40)
})

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  await redis.del(`{${keys.epoch()}}:rebuild`, `{${keys.epoch()}}:rebuild:fence`)
  redis.disconnect()
  await schema.drop()
})

/** A layout-1 like event as `toggle-4.lua` appended it. */
function likeEvent(item: number, user: number, liked: boolean): string[] {
  return ['k', 'like', 'v', String(item), 'u', String(user), 's', liked ? '1' : '0', 't', String(Date.now())]
}

async function likers(item: number): Promise<number[]> {
  const { rows } = await schema.db.query<{ user_id: string }>(
    'SELECT user_id FROM item_likes WHERE item_id = $1 ORDER BY user_id',
    [item],
  )
  return rows.map((r) => Number(r.user_id))
}

describe('drop-drained-stream-1.lua', () => {
  const stream = `${prefix}:drop:{t}:stream`
  const drop = async () => (await dropDrainedStreamScript.run(redis, [stream], [])) as number[]

  it('keeps a stream with undelivered or pending entries, drops it once all are acknowledged', async () => {
    expect(await drop()).toEqual([-1, 0, 0])
    await redis.xadd(stream, '*', 'a', '1')
    expect(await drop()).toEqual([0, 0, 1]) // entries, no group read them
    await redis.xgroup('CREATE', stream, 'g', '0')
    expect(await drop()).toEqual([0, 0, 1]) // not delivered yet
    const read = (await redis.xreadgroup('GROUP', 'g', 'c', 'COUNT', 10, 'STREAMS', stream, '>')) as [
      string,
      [string, string[]][],
    ][]
    const id = read[0]![1][0]![0]
    expect(await drop()).toEqual([0, 1, 0]) // delivered, still pending
    await redis.xack(stream, 'g', id)
    await redis.xadd(stream, '*', 'a', '2')
    expect(await drop()).toEqual([0, 0, 1]) // appended meanwhile: kept
    await redis.xreadgroup('GROUP', 'g', 'c', 'COUNT', 10, 'STREAMS', stream, '>')
    await redis.xack(stream, 'g', ...(await redis.xrange(stream, '-', '+')).map(([i]) => i))
    expect(await drop()).toEqual([1, 0, 0])
    expect(await redis.exists(stream)).toBe(0)
  })
})

describe('startLegacyLayoutDrain', () => {
  it('applies layout-1 events, then removes its streams and keys; the rebuild waits for it', async () => {
    // layout 1 as a running deployment left it: an event not yet read, one read and never
    // acknowledged (its consumer died), one already applied; item state, marker, a dead letter
    const p = 7
    const stream = legacy.stream(p)
    await redis.xgroup('CREATE', stream, 'flush', '0', 'MKSTREAM')
    await redis.xadd(stream, '*', ...likeEvent(7, 1, true))
    await redis.xreadgroup('GROUP', 'flush', 'old-consumer', 'COUNT', 1, 'STREAMS', stream, '>')
    await redis.xadd(stream, '*', ...likeEvent(7, 2, true))
    await redis.xadd(stream, '*', ...likeEvent(23, 3, true))
    await redis.xadd(legacy.stream(2), '*', ...likeEvent(18, 4, true)) // a stream no group reads
    await redis.sadd(`${prefix}:ix:{ix:${p}}:likes:7`, '1', '2')
    await redis.set(`${prefix}:ix:{ix:${p}}:seen:7:u1`, '1')
    await redis.zadd(`${prefix}:rank:{ix:${p}}:all:likes`, 2, '7')
    await redis.set(legacy.epoch(), 'old')
    const minute = Math.floor(Date.now() / 60_000)
    const oldBucket = `${prefix}:rank:{ix:${p}}:min:likes:${minute}`
    await redis.zadd(oldBucket, 2, toMember(7), 1, toMember(23))
    await redis.pexpire(oldBucket, 3_600_000)
    await redis.xadd(legacy.dead(p), '*', 'k', 'like', 'v', 'x')

    const recovery = new CountsRecovery({ redis, sql: schema.db, prefix, partitions: 4 })
    const events: string[] = []
    const drainEvents: string[] = []
    const watched = new CountsRecovery({
      redis,
      sql: schema.db,
      prefix,
      partitions: 4,
      onEvent: (e) => void events.push(e.type),
    })
    // layout 2's marker is missing, but the rebuild must not run before the legacy events landed
    expect(await watched.check()).toBe('rebuilding')
    expect(events).toContain('legacy-draining')
    expect(events).not.toContain('rebuild-started')

    const flush = createInteractionFlush(redis, schema.db, { prefix, partitions: 4, blockMs: 50 })
    const drain = startLegacyLayoutDrain(redis, schema.db, {
      prefix,
      partitions: 4,
      blockMs: 50,
      claimIdleMs: 200,
      checkIntervalMs: 100,
      onDrainEvent: (e) => void drainEvents.push(e.type),
    })
    try {
      const deadline = Date.now() + 20_000
      // 'cleaned' is emitted once the last legacy key is gone (the marker goes earlier, mid-cleanup)
      while (Date.now() < deadline && !drainEvents.includes('cleaned')) await sleep(100)
      expect(drainEvents.filter((e) => e === 'error')).toEqual([])
      expect(await likers(7)).toEqual([1, 2])
      expect(await likers(23)).toEqual([3])
      expect(await likers(18)).toEqual([4])
      // one key per EXISTS: the two streams sit in different slots on a cluster
      expect([await redis.exists(stream), await redis.exists(legacy.stream(2))]).toEqual([0, 0])
      const left: string[] = []
      await forEachKeyPage(redis, prefix, async (_, page) => void left.push(...page))
      expect(left.filter((k) => /\{ix:\d+\}/.test(k))).toEqual([legacy.dead(p)])
      expect(drainEvents).toContain('stream-dropped')
      expect(drainEvents).toContain('cleaned')
      // trending carried over to the items' layout-2 partitions, with the old bucket's TTL
      for (const [item, score] of [
        ['7', '2'],
        ['23', '1'],
      ] as const) {
        const bucket = keys.rankMinute(keys.partitionOf(item), 'likes', minute)
        expect(await redis.zscore(bucket, toMember(item))).toBe(score)
        expect(await redis.pttl(bucket)).toBeGreaterThan(3_000_000)
      }

      // now the recovery rebuilds layout 2 from PostgreSQL, with every legacy event in it
      expect(await recovery.waitUntilServing(10_000)).toBe(true)
      expect(await redis.get(keys.epoch())).not.toBeNull()
    } finally {
      await drain.stop()
      await flush.stop()
    }
  }, 30_000)
})

describe('startLegacyLayoutDrain while Redis is out of reach', () => {
  it('logs its retries at warn, not error (Redis down is handled, not a bug)', async () => {
    // nothing listens on port 1; no offline queue: each command fails at once, as during an outage
    const down = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 })
    const lines: Array<{ level: 'warn' | 'error'; message: string }> = []
    const errors: unknown[] = []
    const drain = startLegacyLayoutDrain(down, schema.db, {
      prefix,
      partitions: 4,
      checkIntervalMs: 20,
      logger: {
        warn: (_f, message) => void lines.push({ level: 'warn', message }),
        error: (_f, message) => void lines.push({ level: 'error', message }),
      },
      onDrainEvent: (e) => {
        if (e.type === 'error') errors.push(e.error)
      },
    })
    try {
      for (const deadline = Date.now() + 5_000; errors.length < 1 && Date.now() < deadline; ) await sleep(10)
    } finally {
      await drain.stop()
      down.disconnect()
    }
    expect(errors.length).toBeGreaterThanOrEqual(1)
    expect(lines.filter((l) => l.level === 'error')).toEqual([])
    expect(lines.some((l) => l.message.includes('Redis unreachable'))).toBe(true)
  })
})

describe('LegacyInteractionKeys.legacyPartitionOf', () => {
  it('names the partition of layout-1 keys only: two SCAN patterns find them whatever the partitions', () => {
    const legacy = new LegacyInteractionKeys('va', 300)
    const layout2 = new InteractionKeys('va', 300)
    expect(legacy.scanPatterns()).toEqual(['va:ix:{ix:*', 'va:rank:{ix:*'])
    expect(legacy.legacyPartitionOf('va:ix:{ix:12}:likes:28')).toBe(12)
    expect(legacy.legacyPartitionOf('va:rank:{ix:7}:min:likes:29000000')).toBe(7)
    expect(legacy.isMinuteBucket('va:rank:{ix:7}:min:likes:29000000')).toBe(true)
    expect(legacy.isMinuteBucket('va:rank:{ix:7}:all:likes')).toBe(false)
    for (const key of [
      layout2.likes('28'),
      layout2.stream(5),
      layout2.rankAll(5, 'likes'),
      'vb:ix:{ix:1}:stream',
    ])
      expect(legacy.legacyPartitionOf(key), key).toBeUndefined()
  })
})
