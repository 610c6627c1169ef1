import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { afterAll, describe, expect, it } from 'vitest'
import {
  BloomFilter,
  BloomLifecycle,
  type BloomLifecycleEvent,
  KeySpace,
  LockTimeoutError,
} from '../../src/index.js'
import { chunks, range } from '../support/items.js'
import { deadRedisClient, deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const dead = deadRedisClient()
const keySpace = new KeySpace(uniquePrefix('bloom-lifecycle'))
let n = 0
const lifecycles: BloomLifecycle[] = []

const filter = (name: string, client = redis) =>
  new BloomFilter({ redis: client, keySpace, name, bits: 100_000, hashes: 5 })

/** A lifecycle over `ids` (read afresh per rebuild), 20-80 ms between retries (default 1-60 s: too slow for a test). */
function lifecycle(
  ids: string[],
  options: { name?: string; failFirst?: number; client?: typeof redis } = {},
) {
  const name = options.name ?? `f${n++}`
  const events: BloomLifecycleEvent[] = []
  let reads = 0
  const requestFilter = filter(name, options.client)
  const kept = new BloomLifecycle({
    filter: requestFilter,
    rebuilder: filter(name),
    // with a broken request-path client, answers still come from a healthy one (as a replica's would)
    ...(options.client ? { answers: filter(name) } : {}),
    source: () => {
      reads++
      if (reads <= (options.failFirst ?? 0)) return failing()
      return chunks(ids, 50)
    },
    retryBaseMs: 20,
    retryMaxMs: 80,
    onEvent: (event) => events.push(event),
  })
  lifecycles.push(kept)
  return { kept, events, requestFilter, reads: () => reads }
}

/**
 * A second instance's lifecycle on filter `name` whose rebuilder's `rebuild` is `rebuild` (to
 * stage a race with a holder), its events recorded.
 */
function waiterWith(name: string, rebuild: BloomFilter['rebuild']) {
  const real = filter(name)
  const rebuilder = Object.assign(Object.create(real) as BloomFilter, {
    rebuild,
    readyGeneration: () => real.readyGeneration(),
  })
  const events: BloomLifecycleEvent[] = []
  const waiter = new BloomLifecycle({
    filter: filter(name),
    rebuilder,
    source: () => chunks(range(0, 100, 'v'), 50),
    retryBaseMs: 20,
    retryMaxMs: 80,
    onEvent: (event) => events.push(event),
  })
  lifecycles.push(waiter)
  return { waiter, events }
}

async function* failing(): AsyncIterable<string[]> {
  yield* []
  throw new Error('source down')
}

/** until()'s options here: a 10 ms poll (retries run 20-80 ms apart), its default 5 s bound. */
const poll = { everyMs: 10 }

afterAll(async () => {
  for (const kept of lifecycles) kept.close()
  await deleteByPrefix(redis, keySpace.prefix)
  redis.disconnect()
  dead.disconnect()
})

describe('BloomLifecycle', () => {
  it('builds the filter at start; the gate then answers "definitely absent"', async () => {
    const { kept, events } = lifecycle(range(0, 200, 'v'))
    expect(kept.rebuilding).toBe('idle')
    const started = kept.start()
    expect(kept.rebuilding).toBe('retrying')
    await started
    expect(kept.rebuilding).toBe('idle')
    expect(kept.trust).toBe('trusted')
    expect(events.map((e) => e.type)).toEqual(['rebuilt'])
    expect(events[0]).toMatchObject({ report: { items: 200, generation: 1, bits: 100_000, hashes: 5 } })
    const answers = await kept.gate.mightContain([...range(0, 200, 'v'), ...range(0, 200, 'absent')])
    expect(answers.slice(0, 200).every(Boolean)).toBe(true)
    expect(answers.slice(200).filter((a) => !a).length).toBeGreaterThan(190)
    expect(kept.gate.inProcess).toBe(false)
  })

  it('retries a failed rebuild with backoff until it succeeds', async () => {
    const { kept, events, reads } = lifecycle(range(0, 10, 'v'), { failFirst: 2 })
    await kept.start()
    expect(reads()).toBe(3)
    expect(events.map((e) => e.type)).toEqual(['rebuild-failed', 'rebuild-failed', 'rebuilt'])
    expect(events[1]).toMatchObject({ attempt: 2 })
    const waits = events.flatMap((e) => (e.type === 'rebuild-failed' ? [e.retryInMs] : []))
    expect(waits[0]).toBeGreaterThanOrEqual(10)
    expect(waits[0]).toBeLessThanOrEqual(20)
    expect(waits[1]).toBeGreaterThanOrEqual(20)
    expect(waits[1]).toBeLessThanOrEqual(40)
  })

  it('a failed add bypasses the gate ("maybe" for all) until a rebuild restores trust', async () => {
    const name = `f${n++}`
    // the request-path filter's Redis is gone; the rebuilder's is fine
    const { kept, events } = lifecycle(['1', '2'], { name, client: dead })
    await kept.rebuild()
    expect(kept.trust).toBe('trusted')
    const absent = range(0, 50, 'absent')
    expect((await kept.gate.mightContain(absent)).some((a) => !a)).toBe(true)

    await kept.add(['3']) // does not throw
    expect(events.find((e) => e.type === 'add-failed')).toMatchObject({ ids: ['3'] })
    expect(kept.trust).toBe('bypassed')
    expect(kept.rebuilding).toBe('retrying')
    // the loop's rebuild (on the healthy connection) restores trust
    await until(() => kept.trust === 'trusted', poll)
    await until(() => kept.rebuilding === 'idle', poll)
    expect(events.filter((e) => e.type === 'rebuilt').length).toBe(2)
  })

  it('while bypassed, the gate answers "maybe" for every id', async () => {
    const { kept } = lifecycle(['1'], { client: dead, failFirst: 1_000 })
    await kept.add(['2'])
    expect(kept.trust).toBe('bypassed')
    expect(await kept.gate.mightContain(range(0, 20, 'absent'))).toEqual(new Array(20).fill(true))
    kept.close()
    expect(kept.rebuilding).toBe('closed')
  })

  it('rebuilds a filter that vanished from Redis when a query finds it not ready', async () => {
    const { kept, events, requestFilter: probe } = lifecycle(range(0, 20, 'v'))
    await kept.start()
    const { meta, shards } = probe.keys(1)
    for (const key of [meta, ...shards]) await redis.del(key) // shards live in different slots on a cluster
    expect(await probe.readyGeneration()).toBe(null)
    expect(await probe.mightContain(['x'])).toEqual([true]) // "not ready": fails open
    await until(() => events.some((e) => e.type === 'missing'), poll)
    await until(() => events.filter((e) => e.type === 'rebuilt').length === 2, poll)
    expect(await probe.readyGeneration()).not.toBe(null)
  })

  it('a generation published while its lock refused us counts as done elsewhere: no second rebuild', async () => {
    const name = `f${n++}`
    const holder = lifecycle(range(0, 100, 'v'), { name })
    let published!: () => void
    const holderDone = new Promise<void>((resolve) => (published = resolve))
    const real = filter(name)
    let calls = 0
    // the waiter's lock attempt fails while the holder rebuilds, and the holder publishes before
    // the waiter looks at `ready` (a loaded box stretches that window)
    const { waiter, events } = waiterWith(name, async (...args) => {
      if (calls++ > 0) return real.rebuild(...args)
      await holderDone
      throw new LockTimeoutError(`${name}:rebuild`, 0)
    })
    const waiting = waiter.start()
    await holder.kept.start()
    published()
    await waiting
    expect(events.map((e) => e.type)).toEqual(['rebuild-elsewhere', 'rebuilt-elsewhere'])
    expect(calls).toBe(1)
  })

  it('a generation published between its look at `ready` and its lock counts as done elsewhere', async () => {
    const name = `f${n++}`
    const holder = lifecycle(range(0, 100, 'v'), { name })
    const real = filter(name)
    let calls = 0
    // the holder publishes and releases the lock after the waiter read `ready` (none yet) and
    // before the waiter asks for the lock, which it then gets
    const { waiter, events } = waiterWith(name, async (...args) => {
      calls++
      await holder.kept.start()
      return real.rebuild(...args)
    })
    await waiter.start()
    const published = holder.events.find((e) => e.type === 'rebuilt')
    expect(published).toBeDefined()
    expect(events).toEqual([
      {
        type: 'rebuilt-elsewhere',
        generation: published?.type === 'rebuilt' ? published.report.generation : -1,
      },
    ])
    expect(calls).toBe(1)
    // a rebuild asked for outright (an operator's) still runs
    expect((await waiter.rebuild()).generation).toBeGreaterThan(
      published?.type === 'rebuilt' ? published.report.generation : 0,
    )
  })

  it('close stops the retry loop', async () => {
    const { kept, reads } = lifecycle([], { failFirst: 1_000 })
    const started = kept.start()
    await until(() => reads() >= 2, poll)
    kept.close()
    await started
    const after = reads()
    await sleep(150)
    expect(reads()).toBe(after)
    expect(kept.rebuilding).toBe('closed')
  })
})
