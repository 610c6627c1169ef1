import { Redis } from 'ioredis'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { StoreUnavailableError } from '../../src/errors/index.js'
import { INTERACTION_DEFAULTS } from '../../src/interactions/defaults.js'
import { Interactions, playViewer, playViewerHash } from '../../src/interactions/index.js'
import { playBatchScript, toggleBatchScript } from '../../src/interactions/scripts.js'
import { prng } from '../support/prng.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

// toggle-batch-n.lua / play-batch-n.lua through Interactions' EventBatcher: the calls of one
// poll phase leave as one script call per partition, each caller answered as if alone
const redis = testRedisClient(10_000)
const prefix = uniquePrefix('ix-batch')
const options = { partitions: 4, topK: 1000, bucketTtlMs: 120_000 }
const batched = new Interactions(redis, { ...options, prefix: `${prefix}:b` })
const single = new Interactions(redis, { ...options, prefix: `${prefix}:s`, maxEventsPerCall: 1 })
const MAX = INTERACTION_DEFAULTS.maxEventsPerCall

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

type Op =
  | { type: 'toggle'; kind: 'like' | 'favorite'; item: string; user: string; on: boolean }
  | { type: 'play'; item: string; viewer: string }

interface Answer {
  changed: boolean
  count: number
  eventId: string | undefined
}

function call(ix: Interactions, op: Op): Promise<Answer> {
  if (op.type === 'play')
    return ix
      .recordPlay(op.item, op.viewer)
      .then((r) => ({ changed: r.counted, count: r.count, eventId: r.eventId }))
  return op.kind === 'like' ? ix.setLiked(op.item, op.user, op.on) : ix.setFavorited(op.item, op.user, op.on)
}

/** The answers of calls made one by one: a Set per item and kind, viewers seen per item (one window). */
class Model {
  private readonly members = new Map<string, Set<string>>()
  private readonly seen = new Map<string, Set<string>>()
  private readonly plays = new Map<string, number>()

  apply(op: Op): { changed: boolean; count: number } {
    if (op.type === 'play') {
      const seen = this.seen.get(op.item) ?? new Set()
      this.seen.set(op.item, seen)
      const changed = !seen.has(op.viewer)
      seen.add(op.viewer)
      const count = (this.plays.get(op.item) ?? 0) + (changed ? 1 : 0)
      this.plays.set(op.item, count)
      return { changed, count }
    }
    const key = `${op.kind}:${op.item}`
    const set = this.members.get(key) ?? new Set()
    this.members.set(key, set)
    const changed = op.on !== set.has(op.user)
    if (op.on) set.add(op.user)
    else set.delete(op.user)
    return { changed, count: set.size }
  }
}

/** Random ops: items 1, 5, 9, 13 share partition 1 of 4, item 2 is in partition 2; item 1 grows past splits. */
function randomOps(random: () => number, n: number): Op[] {
  const ops: Op[] = []
  const items = ['1', '1', '1', '5', '9', '13', '2']
  for (let i = 0; i < n; i++) {
    const item = items[Math.floor(random() * items.length)]!
    const people = item === '1' ? 700 : 12
    const who = String(1 + Math.floor(random() * people))
    if (random() < 0.3) ops.push({ type: 'play', item, viewer: playViewer({ userId: who }) })
    else
      ops.push({
        type: 'toggle',
        kind: random() < 0.8 ? 'like' : 'favorite',
        item,
        user: who,
        on: random() < 0.7,
      })
  }
  return ops
}

/**
 * Each stream's entries (fields, `t` left out) and ids, per partition; toggles and plays apart:
 * a poll phase's toggles and its plays are two calls, so their events interleave by call, not by
 * caller (each kind stays in call order; a play and a toggle never depend on each other).
 */
async function streams(
  ix: Interactions,
): Promise<{ toggles: string[][]; plays: string[][]; ids: string[] }[]> {
  const out = []
  for (const p of ix.keys.allPartitions()) {
    const entries = await redis.xrange(ix.keys.stream(p), '-', '+')
    const fields = entries.map(([, f]) => f.slice(0, -2))
    out.push({
      toggles: fields.filter((f) => f[1] !== 'play'),
      plays: fields.filter((f) => f[1] === 'play'),
      ids: entries.map(([id]) => id),
    })
  }
  return out
}

/** All-time rankings, and each ranked member's score summed over the minute buckets. */
async function rankings(ix: Interactions): Promise<unknown> {
  const out: Record<string, unknown> = {}
  for (const p of ix.keys.allPartitions()) {
    for (const metric of ['likes', 'plays'] as const) {
      out[`${p}:all:${metric}`] = await redis.zrange(ix.keys.rankAll(p, metric), '0', '-1', 'WITHSCORES')
      const [seconds] = await redis.time()
      const minute = Math.floor(Number(seconds) / 60)
      const sums: Record<string, number> = {}
      for (const m of [minute - 2, minute - 1, minute]) {
        const pairs: string[] = await redis.zrange(ix.keys.rankMinute(p, metric, m), '0', '-1', 'WITHSCORES')
        for (let i = 0; i < pairs.length; i += 2)
          sums[pairs[i]!] = (sums[pairs[i]!] ?? 0) + Number(pairs[i + 1])
      }
      out[`${p}:min:${metric}`] = sums
    }
  }
  return out
}

describe('batched toggles and plays (toggle-batch-n.lua, play-batch-n.lua)', () => {
  it('a poll phase of one partition leaves as one script call per maxEventsPerCall events', async () => {
    // scripts loaded first: a NOSCRIPT answered by EVAL would count twice
    await batched.setLiked('17', '1', false)
    await batched.recordPlay('18', playViewer({ userId: '9' }))
    const sent = vi.spyOn(redis, 'sendCommand')
    try {
      const n = MAX + 44
      const users = Array.from({ length: n }, (_, i) => String(5000 + i))
      const answers = await Promise.all(users.map((u) => batched.setLiked('17', u, true)))
      expect(answers.map((a) => a.count)).toEqual(users.map((_, i) => i + 1))
      const scripts = sent.mock.calls.filter(([c]) => ['evalsha', 'eval'].includes(c.name))
      expect(scripts).toHaveLength(2) // 256 + 44, never one call per toggle
      sent.mockClear()
      // two partitions in one poll phase: one call each
      await Promise.all([
        batched.recordPlay('17', playViewer({ userId: '1' })),
        batched.recordPlay('17', playViewer({ userId: '2' })),
        batched.recordPlay('18', playViewer({ userId: '1' })),
      ])
      expect(sent.mock.calls.filter(([c]) => ['evalsha', 'eval'].includes(c.name))).toHaveLength(2)
    } finally {
      sent.mockRestore()
    }
  })

  it('property: each caller gets the answer of the same calls made one by one, in call order', async () => {
    for (const seed of [7, 8]) {
      for (const ix of [batched, single]) await deleteByPrefix(redis, ix.options.prefix)
      const random = prng(seed)
      const model = new Model()
      const ops: Op[] = []
      const eventIds = new Map<number, string[]>()
      const ownEvents: [string, string[]][] = []
      for (let round = 0; round < 12; round++) {
        // rounds of 1 to 300 calls, fired in one tick; repeats and the same user twice are common
        const size = round === 0 ? 1 : 1 + Math.floor(random() * 300)
        const roundOps = randomOps(random, size)
        // the same user toggling twice in one batch: on, then off
        roundOps.push({ type: 'toggle', kind: 'like', item: '5', user: '3', on: true })
        roundOps.push({ type: 'toggle', kind: 'like', item: '5', user: '3', on: false })
        const answers = await Promise.all(roundOps.map((op) => call(batched, op)))
        roundOps.forEach((op, i) => {
          const expected = model.apply(op)
          const got = answers[i]!
          expect({ seed, round, i, op, changed: got.changed, count: got.count }).toEqual({
            seed,
            round,
            i,
            op,
            ...expected,
          })
          expect(got.eventId === undefined).toBe(!expected.changed)
          if (got.eventId !== undefined) {
            const p = batched.keys.partitionOf(op.item)
            eventIds.set(p, [...(eventIds.get(p) ?? []), got.eventId])
            const fields =
              op.type === 'play'
                ? ['k', 'play', 'v', op.item, 'w', op.viewer]
                : ['k', op.kind, 'v', op.item, 'u', op.user, 's', op.on ? '1' : '0']
            ownEvents.push([`${p} ${got.eventId}`, fields])
          }
        })
        ops.push(...roundOps)
      }
      // the same calls one by one on the single-call scripts: the same events, in the same order
      for (const op of ops) await call(single, op)
      const b = await streams(batched)
      const s = await streams(single)
      expect(b.map((x) => [x.toggles, x.plays])).toEqual(s.map((x) => [x.toggles, x.plays]))
      for (const p of batched.keys.allPartitions())
        expect(b[p]!.ids.sort()).toEqual((eventIds.get(p) ?? []).sort())
      // each caller's event id names its own event (ids are per stream: per partition)
      const byId = new Map<string, string[]>()
      for (const p of batched.keys.allPartitions())
        for (const [id, f] of await redis.xrange(batched.keys.stream(p), '-', '+'))
          byId.set(`${p} ${id}`, f.slice(0, -2))
      for (const [id, fields] of ownEvents) expect(byId.get(id)).toEqual(fields)
      expect(await rankings(batched)).toEqual(await rankings(single))
    }
  })

  it('a failed batch fails each of its callers with the same StoreUnavailableError', async () => {
    const down = new Redis({ port: 1, lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 })
    down.on('error', () => {})
    const ix = new Interactions(down, { prefix: `${prefix}:down`, partitions: 4 })
    const settled = await Promise.allSettled([
      ix.setLiked('1', '1', true),
      ix.setFavorited('1', '2', true),
      ix.setLiked('5', '1', false),
    ])
    const errors = settled.map((r) => (r.status === 'rejected' ? r.reason : undefined))
    expect(errors[0]).toBeInstanceOf(StoreUnavailableError)
    expect(errors.every((e) => e === errors[0])).toBe(true)
    down.disconnect()
  })

  it('checks every toggle and play of a batch before its first write', async () => {
    const k = new Interactions(redis, { ...options, prefix: `${prefix}:v` }).keys
    const p = k.partitionOf('21')
    const head = [k.rankAll(p, 'likes'), k.rankMinutePrefix(p, 'likes'), k.stream(p)]
    const unit = ['21', '00000000000000000021', 'like']
    await expect(
      toggleBatchScript.run(
        redis,
        [...head, k.likes('21'), k.gone('21')],
        [1000, 120_000, 128, ...unit, '1', '1', 1, 7, '2', 'x', 1, 8],
      ),
    ).rejects.toThrow(/toggle 2 has state x/)
    const playHead = [k.rankAll(p, 'plays'), k.rankMinutePrefix(p, 'plays'), k.stream(p)]
    await expect(
      playBatchScript.run(
        redis,
        [...playHead, k.playSeenPrefix('21'), k.plays('21'), k.gone('21')],
        [600_000, 1000, 120_000, 128, '', '21', '00000000000000000021', 'u1', '5', 1, 'u2', '0', 1],
      ),
    ).rejects.toThrow(/play 2 has viewer hash 0/)
    expect(await redis.exists(k.stream(p), k.likes('21'), k.plays('21'), k.rankAll(p, 'likes'))).toBe(0)
  })

  it("play-batch-n.lua keeps play-6.lua's window: counted one generation back is a repeat, two back counts", async () => {
    const k = new Interactions(redis, { ...options, prefix: `${prefix}:w` }).keys
    const p = k.partitionOf('33')
    const W = 60_000
    const t0 = 30_000_000 * W // generation 30,000,000, on the script's test clock
    const keys = [
      k.rankAll(p, 'plays'),
      k.rankMinutePrefix(p, 'plays'),
      k.stream(p),
      k.playSeenPrefix('33'),
      k.plays('33'),
      k.gone('33'),
    ]
    const plays = async (clock: number, viewers: string[]) => {
      const args = viewers.flatMap((v) => [v, playViewerHash(v), 1])
      const reply = (await playBatchScript.run(redis, keys, [
        W,
        1000,
        120_000,
        128,
        clock,
        '33',
        '00000000000000000033',
        ...args,
      ])) as unknown[]
      return viewers.map((_, i) => [reply[3 * i], reply[3 * i + 1]])
    }
    expect(await plays(t0, ['u1', 'u2', 'u1'])).toEqual([
      [1, 1],
      [1, 2],
      [0, 2],
    ])
    expect(await plays(t0 + W, ['u1', 'u3', 'u1'])).toEqual([
      [0, 2],
      [1, 3],
      [0, 3],
    ])
    expect(await plays(t0 + 2 * W + W - 1, ['u1', 'u3', 'u2'])).toEqual([
      [1, 4],
      [0, 4],
      [1, 5],
    ])
  })
})
