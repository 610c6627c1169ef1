// The CROSSSLOT guard (issue 7): every library Lua script and every MULTI runs
// against a real Redis Cluster through the public APIs, and fails if any of
// them touches keys in more than one slot. A recorder sees every command the
// cluster clients send (also from duplicated connections), so an error that a
// module swallows (fail-open paths) still fails this test.
import { createHash } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { Cluster } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { CacheStack } from '../../src/cache/stack.js'
import {
  BloomFilter,
  CACHE_DEFAULTS,
  CountsReader,
  CountsRecovery,
  createCache,
  createInteractionFlush,
  createRankings,
  createRateLimiter,
  DecayedRankings,
  Interactions,
  KeySpace,
  LegacyInteractionKeys,
  Mutex,
  notFound,
  playViewer,
  type RateLimitAlgorithm,
  startLegacyLayoutDrain,
} from '../../src/index.js'
import { windowTopKeys } from '../../src/rankings/ranking_keys.js'
import { resolveLuaIncludes } from '../../src/redis/lua_include.js'
import { type CountersSchema, createCountersSchema, seedMembers, seedPlays } from '../counters/pg_schema.js'
import { keySlot } from '../support/key_slot.js'
import { deleteByPrefix, uniquePrefix } from '../support/redis.js'
import { type ClusterTarget, clusterTarget } from './cluster_target.js'
import { CommandRecorder, CROSS_SLOT_ERROR, type RecordedCommand } from './command_recorder.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

interface LuaFile {
  path: string
  name: string
  /** From the name's `-<numKeys>.lua`; 'n' for a batch script (`-n.lua`, keys per item); -1 when absent. */
  numberOfKeys: number | 'n'
  source: string
  sha1: string
}

function luaFiles(dir = SRC): LuaFile[] {
  const found: LuaFile[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    // includes are local functions (no keys of their own), checked inside the scripts using them
    if (entry.isDirectory()) {
      if (entry.name !== 'includes') found.push(...luaFiles(path))
    } else if (entry.name.endsWith('.lua')) {
      const source = resolveLuaIncludes(path)
      const match = /^(.+)-(\d+|n)\.lua$/.exec(entry.name)
      found.push({
        path: path.slice(SRC.length),
        name: entry.name,
        numberOfKeys: match ? (match[2] === 'n' ? 'n' : Number(match[2])) : -1,
        source,
        sha1: createHash('sha1').update(source).digest('hex'),
      })
    }
  }
  return found.sort((a, b) => a.path.localeCompare(b.path))
}

/** The leading `--[[ … ]]` comment block, '' when the file does not open with one. */
function header(source: string): string {
  return source.startsWith('--[[') ? source.slice(0, source.indexOf(']]') + 2) : ''
}

function indexesUsed(code: string, array: 'KEYS' | 'ARGV'): number[] {
  return [...new Set([...code.matchAll(new RegExp(`${array}\\[(\\d+)\\]`, 'g'))].map((m) => Number(m[1])))]
}

describe('Lua files (static)', () => {
  const files = luaFiles()

  it('finds the scripts', () => {
    expect(files.length).toBeGreaterThanOrEqual(20)
  })

  it.each(files.map((f) => [f.path, f] as const))(
    '%s: kebab-name-<numKeys>.lua (or -n.lua) in <capability>/lua/, one header format that declares every KEYS[i], ARGV[i] and the return value, no KEYS/SCAN',
    (_path, file) => {
      expect(file.numberOfKeys, 'file name must end in -<numKeys>.lua or -n.lua').not.toBe(-1)
      expect(file.name, 'kebab-case name').toMatch(/^[a-z]+(-[a-z]+)*-(\d+|n)\.lua$/)
      expect(file.path, "in its capability's lua/ folder").toMatch(/^[a-z_]+\/lua\/[^/]+$/)
      const head = header(file.source)
      expect(head, 'header opens with --[[ and the file name').toMatch(
        new RegExp(`^--\\[\\[\\n${file.name}: `),
      )
      const body = file.source.slice(head.length)
      if (file.numberOfKeys === 'n') {
        // a batch: each item's keys, declared by their index in terms of the item's (KEYS[i],
        // KEYS[2i-1], KEYS[3 + j]); a key read by a fixed index (a partition's keys every item of
        // the batch shares, e.g. its stream) is declared as such
        expect(head, 'header declares the keys of item i').toMatch(/KEYS\[[^\]]*[ij][^\]]*\]/)
        for (const i of indexesUsed(body, 'KEYS'))
          expect(head, `header declares the shared KEYS[${i}]`).toContain(`KEYS[${i}]`)
      } else {
        for (let i = 1; i <= file.numberOfKeys; i++)
          expect(head, `header declares KEYS[${i}]`).toContain(`KEYS[${i}]`)
        for (const i of indexesUsed(body, 'KEYS'))
          expect(i, 'body uses only declared keys').toBeLessThanOrEqual(file.numberOfKeys)
      }
      for (const i of indexesUsed(body, 'ARGV')) {
        const ranges = [...head.matchAll(/ARGV\[(\d+)\.\./g)].map((m) => Number(m[1]))
        const declared = head.includes(`ARGV[${i}]`) || ranges.some((from) => from <= i)
        expect(declared, `header declares ARGV[${i}]`).toBe(true)
      }
      expect(head, 'header says what it returns').toMatch(/return/i)
      expect(body).not.toMatch(/redis\.p?call\(\s*['"](KEYS|SCAN)['"]/i)
    },
  )
})

let target: ClusterTarget
let cluster: Cluster
let recorder: CommandRecorder
let schema: CountersSchema
const prefix = uniquePrefix('xslot').replace(/:/g, '_')

beforeAll(async () => {
  target = await clusterTarget()
  cluster = target.client()
  await cluster.ping()
  recorder = CommandRecorder.install(cluster)
  schema = await createCountersSchema('xslot', 30)
}, 60_000)

afterAll(async () => {
  recorder?.restore()
  if (cluster) {
    await deleteByPrefix(cluster, prefix)
    await deleteByPrefix(cluster, `{${prefix}`) // the counters rebuild lock is tagged {<prefix>:epoch}
  }
  await schema?.drop()
  await target?.close()
})

describe('on Redis Cluster, through the public APIs', () => {
  it('Mutex: acquire, extend, release', async () => {
    for (const name of ['job-a', 'job-b']) {
      const mutex = Mutex.named(cluster, new KeySpace(prefix), name, { ttlMs: 5000 })
      const lease = await mutex.tryAcquire()
      expect(lease).not.toBeNull()
      expect(await mutex.tryAcquire()).toBeNull()
      expect(await lease?.extend()).toBe(true)
      expect(await lease?.release()).toBe(true)
    }
  })

  it('every rate limiter algorithm, several keys', async () => {
    const algorithms: RateLimitAlgorithm[] = [
      'fixedWindow',
      'slidingLog',
      'slidingWindow',
      'tokenBucket',
      'gcra',
    ]
    for (const algorithm of algorithms) {
      const limiter = createRateLimiter({
        redis: cluster,
        prefix,
        algorithm,
        limit: 2,
        windowMs: 60_000,
        timeoutMs: 2000,
        fallback: 'failClosed',
      })
      // many keys in one tick (keys on every master): nothing may batch them across nodes
      const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => limiter.limit(`burst${i}`)))
      expect(burst.map((a) => a.source)).toEqual(Array(30).fill('redis'))
      for (const key of ['alice', 'bob', 'carol']) {
        const answers = [await limiter.limit(key), await limiter.limit(key), await limiter.limit(key)]
        expect(answers.map((a) => [a.allowed, a.source])).toEqual([
          [true, 'redis'],
          [true, 'redis'],
          [false, 'redis'],
        ])
        expect((await limiter.peek(key)).remaining).toBe(0)
        await limiter.reset(key)
        expect((await limiter.peek(key)).remaining).toBe(2)
      }
    }
  })

  it('leased rate limiter: slices, refusal, give-back, keys on every master', async () => {
    for (const algorithm of ['fixedWindow', 'slidingWindow'] as const) {
      const limiter = createRateLimiter({
        redis: cluster,
        prefix,
        name: `leased-${algorithm}`,
        algorithm,
        limit: 8,
        windowMs: 60_000,
        timeoutMs: 2000,
        fallback: 'failClosed',
        mode: 'leased',
      })
      const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => limiter.limit(`burst${i}`)))
      expect(burst.map((a) => [a.allowed, a.source])).toEqual(Array(30).fill([true, 'redis']))
      const answers = []
      for (let i = 0; i < 9; i++) answers.push(await limiter.limit('alice'))
      expect(answers.map((a) => a.allowed)).toEqual([...Array(8).fill(true), false])
      // slices of 2, 2, 1, 1, 1, 1, then the refusal
      expect(answers.filter((a) => a.source === 'redis')).toHaveLength(7)
      expect(await limiter.release()).toBe(30) // each burst key's slice of 2 has 1 left
    }
  })

  it('BloomFilter: rebuild (twice, so the old generation is dropped), add, check', async () => {
    const bloom = new BloomFilter({
      redis: cluster,
      prefix,
      name: 'videos',
      bits: 40_000,
      hashes: 5,
      shards: 4,
    })
    const ids = Array.from({ length: 500 }, (_, i) => `v${i}`)
    async function* chunks() {
      yield ids.slice(0, 250)
      yield ids.slice(250)
    }
    const first = await bloom.rebuild(chunks())
    const second = await bloom.rebuild(chunks())
    expect(second.generation).toBeGreaterThan(first.generation)
    await bloom.add(['late-1', 'late-2'])
    expect(await bloom.mightContain([...ids.slice(0, 50), 'late-1'])).toEqual(Array(51).fill(true))
    for (const key of bloom.keys(first.generation).shards) expect(await cluster.exists(key)).toBe(0)
    expect(bloom.stats.failOpenRedisError).toBe(0)
  })

  it('Cache: getOrLoad (claim, fill), a failing loader (abandon), SWR refresh, read-claim, set, getManyOrLoad, invalidate; a waiter is woken', async () => {
    const a = createCache<string>({ redis: cluster, name: 'video', prefix, redisTimeoutMs: 2000 })
    const b = createCache<string>({ redis: cluster, name: 'video', prefix, redisTimeoutMs: 2000 })
    try {
      await Promise.all([a.ready, b.ready])
      expect(await a.getOrLoad('1', async (k) => `v${k}`)).toBe('v1')
      expect(await b.getOrLoad('1', async () => 'not used')).toBe('v1') // from L2
      await expect(
        a.getOrLoad('2', async () => {
          throw new Error('loader down')
        }),
      ).rejects.toThrow('loader down')
      expect(await a.getOrLoad('missing', async () => notFound())).toBeUndefined()
      // a second instance waits on the first one's lock and is woken by its fill
      let release: () => void = () => {}
      const gate = new Promise<void>((resolve) => {
        release = resolve
      })
      const leader = a.getOrLoad('3', async () => {
        await gate
        return 'v3'
      })
      await sleep(100)
      const waiter = b.getOrLoad('3', async () => 'waiter loaded')
      await sleep(100)
      release()
      expect(await leader).toBe('v3')
      expect(await waiter).toBe('v3')
      // past its logical TTL, inside grace: served stale, refreshed behind (claim-4.lua, mode 'refresh')
      const swr = createCache<string>({
        redis: cluster,
        name: 'swr',
        prefix,
        redisTimeoutMs: 2000,
        l1: false,
      })
      try {
        await swr.getOrLoad('8', async () => 'v8', { ttlMs: 100 })
        await sleep(200)
        expect(await swr.getOrLoad('8', async () => 'v8 again')).toBe('v8')
        await expect.poll(() => swr.getOrLoad('8', async () => 'unused')).toBe('v8 again')
      } finally {
        swr.close()
      }
      // once most recent reads missed, an L1 miss reads and claims in one read-claim-n.lua call (per key)
      const cold = createCache<string>({
        redis: cluster,
        name: 'cold',
        prefix,
        redisTimeoutMs: 2000,
        l1: false,
      })
      try {
        for (let i = 0; i < 40; i++)
          expect(await cold.getOrLoad(`w${i}`, async (k) => `v${k}`)).toBe(`vw${i}`)
        const stack = (cold as unknown as { stack: CacheStack<string> }).stack
        expect(stack.missRate.value).toBeGreaterThanOrEqual(CACHE_DEFAULTS.readClaimMissRate)
        // the keys sit on different masters, so their replies (and loads) come in any order
        const loaded: string[] = []
        const keys = ['x1', 'x2', 'x3', 'x1']
        const values = await Promise.all(
          keys.map((k) =>
            cold.getOrLoad(k, async () => {
              loaded.push(k)
              return `v${k}`
            }),
          ),
        )
        expect(values).toEqual(['vx1', 'vx2', 'vx3', 'vx1'])
        expect(loaded.sort()).toEqual(['x1', 'x2', 'x3']) // the repeated x1 joined the first load
        expect(await cold.getOrLoad('w0', async () => 'unused')).toBe('vw0') // a hit through it too
      } finally {
        cold.close()
      }
      await a.set('4', 'v4')
      const many = await b.getManyOrLoad(['1', '4', '5', '6', '7'], async (keys) =>
        keys.map((k) => `batch${k}`),
      )
      expect([...many.entries()]).toEqual([
        ['1', 'v1'],
        ['4', 'v4'],
        ['5', 'batch5'],
        ['6', 'batch6'],
        ['7', 'batch7'],
      ])
      await a.invalidate(['1', '4', '5'])
      // the L1 invalidation reaches b over pub/sub (PUBLISH is broadcast to every node of a cluster)
      let seen: string | undefined
      for (let i = 0; i < 60 && seen !== 'reloaded'; i++) {
        seen = await b.getOrLoad('1', async () => 'reloaded')
        if (seen !== 'reloaded') await sleep(50)
      }
      expect(seen).toBe('reloaded')
    } finally {
      a.close()
      b.close()
    }
  })

  it('Interactions toggle/play, the flush to PostgreSQL (with a dead letter and a trim), rankings, counters', async () => {
    const partitions = 8
    const recovery = new CountsRecovery({ redis: cluster, sql: schema.db, prefix, partitions, chunkSize: 7 })
    await seedMembers(schema.db, 'likes', 3, [100, 200])
    await seedPlays(schema.db, 4, 2)
    expect(await recovery.check()).toBe('rebuilding') // no epoch yet: rebuild, commit the epoch
    expect(await recovery.waitUntilServing(20_000)).toBe(true)
    expect(await recovery.restoreItem('3')).toMatchObject({ likes: 2, plays: 0 })

    const interactions = new Interactions(cluster, { prefix, partitions })
    // one poll phase: one toggle-batch-n.lua and one play-batch-n.lua call per partition
    const videos = Array.from({ length: 12 }, (_, i) => String(i + 1))
    await Promise.all(
      videos.flatMap((v) => [
        interactions.setLiked(v, '7', true),
        interactions.setFavorited(v, '7', true),
        interactions.recordPlay(v, playViewer({ userId: '7' })),
      ]),
    )
    // one call per event: toggle-5.lua, play-6.lua (a repeat play, not counted)
    const single = new Interactions(cluster, { prefix, partitions, maxEventsPerCall: 1 })
    await single.setLiked('1', '7', false)
    expect(await single.recordPlay('1', playViewer({ userId: '7' }))).toMatchObject({ counted: false })
    await cluster.xadd(interactions.keys.stream(5), '*', 'v', 'not-a-video', 't', '1')

    const events: string[] = []
    const flush = createInteractionFlush(cluster, schema.db, {
      prefix,
      partitions,
      blockMs: 100,
      claimIdleMs: 50,
      claimIntervalMs: 50,
      maxDeliveries: 1,
      compactRead: true, // runs read-compact-1.lua on the cluster (the default reads with XREADGROUP)
      onEvent: (e) => events.push(e.type),
    })
    flush.start()
    try {
      const deadline = Date.now() + 20_000
      for (;;) {
        const lag = await flush.maintain()
        if (lag.pending === 0 && lag.undelivered === 0 && flush.stats.deadLettered === 1) break
        if (Date.now() > deadline) throw new Error(`flush did not drain: ${JSON.stringify(lag)}, ${events}`)
        await sleep(50)
      }
    } finally {
      await flush.stop()
    }
    expect(await cluster.xlen(interactions.keys.dead(5))).toBe(1)
    const { rows } = await schema.pool.query('SELECT count(*)::int AS n FROM item_likes WHERE user_id = 7')
    expect(rows[0].n).toBe(11)

    const rankings = createRankings({ redis: cluster, prefix, partitions })
    expect((await rankings.top({ metric: 'likes', window: 'all', limit: 1 }))[0]?.itemId).toBe('3')
    expect(await rankings.top({ metric: 'plays', window: '1h', limit: 3 })).toHaveLength(3)
    // another process holds the window's recompute lock and nothing is cached yet: merged
    // privately (window-top-1.lua on every partition's node, nothing written)
    await cluster.set(windowTopKeys(interactions.keys, 'plays', '24h', 3).lock, 'other', 'PX', 10_000)
    expect(await rankings.top({ metric: 'plays', window: '24h', limit: 3 })).toHaveLength(3)
    expect(rankings.stats.privateComputes).toBe(1)
    const decayed = new DecayedRankings({ redis: cluster, prefix, partitions })
    for (let v = 1; v <= 4; v++) for (let i = 0; i < v; i++) await decayed.record(String(v), 'plays')
    expect((await decayed.top({ metric: 'plays', window: '1h', limit: 1 }))[0]?.itemId).toBe('4')

    const reader = new CountsReader({ redis: cluster, prefix, partitions, timeoutMs: 2000 })
    const read = await reader.readCounts(['1', '3', '12'], '7')
    expect(read.ok).toBe(true)
    if (read.ok) expect(read.counts.get('3')).toMatchObject({ likes: 3, liked: true })
    const report = await recovery.reconcile()
    expect(report.drifted).toEqual([])
    await recovery.stop()
    // a deleted video: forget's UNLINKs and ZREM pipelines stay in its slot, its toggles are refused
    expect((await interactions.forget('12')).unlinked).toBeGreaterThanOrEqual(3)
    await expect(interactions.setLiked('12', '8', true)).rejects.toMatchObject({
      code: 'FLOODGATE_ITEM_GONE',
    })
    await expect(single.recordPlay('12', playViewer({ userId: '8' }))).rejects.toMatchObject({
      code: 'FLOODGATE_ITEM_GONE',
    })
    for (const key of [
      interactions.keys.likes('12'),
      interactions.keys.favorites('12'),
      interactions.keys.plays('12'),
    ])
      expect(await cluster.exists(key)).toBe(0)
  })

  it('the layout-1 drain: its stream applied and dropped, its trending carried, its keys deleted', async () => {
    const legacy = new LegacyInteractionKeys(prefix)
    const like = ['k', 'like', 'v', '3', 'u', '9', 's', '1', 't', String(Date.now())]
    await cluster.xadd(legacy.stream(3), '*', ...like)
    await cluster.zadd(`${prefix}:rank:{ix:3}:min:likes:${Math.floor(Date.now() / 60_000)}`, 1, '3')
    const steps: string[] = []
    const drain = startLegacyLayoutDrain(cluster, schema.db, {
      prefix,
      partitions: 8,
      blockMs: 100,
      checkIntervalMs: 50,
      onDrainEvent: (e) => void steps.push(e.type),
    })
    try {
      for (const deadline = Date.now() + 20_000; !steps.includes('cleaned'); await sleep(50))
        if (Date.now() > deadline) throw new Error(`drain did not finish: ${steps}`)
    } finally {
      await drain.stop()
    }
    const { rows } = await schema.pool.query('SELECT count(*)::int AS n FROM item_likes WHERE user_id = 9')
    expect(rows[0].n).toBe(1)
  })
})

describe('what the cluster saw', () => {
  const isScript = (c: RecordedCommand) => c.name === 'evalsha' || c.name === 'eval'

  it('no command, script or pipeline was refused for crossing slots', () => {
    expect(recorder.errors.filter((e) => CROSS_SLOT_ERROR.test(e.message))).toEqual([])
  })

  it('every command and every script call kept its keys in one slot', () => {
    const crossing = recorder.commands.filter((c) => c.slots.length > 1)
    expect(crossing.map((c) => `${c.name} ${c.keys.join(' ')}`)).toEqual([])
  })

  it('every MULTI kept all its keys in one slot', () => {
    let transactions = 0
    for (const batch of recorder.batchesOf().values()) {
      if (!batch.some((c) => c.name === 'multi')) continue
      transactions++
      const slots = new Set(batch.flatMap((c) => c.slots))
      expect([...slots], batch.map((c) => `${c.name} ${c.keys.join(' ')}`).join('; ')).toHaveLength(1)
    }
    expect(transactions).toBeGreaterThan(0) // the window cache's MULTI ran
  })

  it('every library Lua script ran on the cluster', () => {
    const ran = new Set(
      recorder.commands.filter(isScript).map(
        (c) =>
          c.sha1 ??
          createHash('sha1')
            .update(c.source ?? '')
            .digest('hex'),
      ),
    )
    const missing = luaFiles().filter((f) => !ran.has(f.sha1))
    expect(missing.map((f) => f.path)).toEqual([])
  })

  it('the load spreads: script keys land in many slots, on every master', async () => {
    const slots = new Set(recorder.commands.filter(isScript).flatMap((c) => c.slots))
    expect(slots.size).toBeGreaterThan(20)
    const masters = new Set<string>()
    for (const slot of slots) {
      const node = cluster.slots[slot]?.[0]
      if (node) masters.add(node)
    }
    expect(masters.size).toBe(cluster.nodes('master').length)
    expect(keySlot(`${prefix}:x:{a}:1`)).toBe(keySlot(`${prefix}:y:{a}:2`)) // sanity: the tag decides the slot
  })
})
