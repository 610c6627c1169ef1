import { setTimeout as sleep } from 'node:timers/promises'
import { until } from '@floodgate/test-support'
import { describe, expect, it } from 'vitest'
import type { StreamEntry } from '../../src/stream/index.js'
import { poll, streamFixture } from './stream_fixture.js'

const { redis, streamPair, add, consumer } = streamFixture()

/** A handler that records what it applies and holds its first call until `open()`. */
function heldHandler() {
  const applied: StreamEntry[] = []
  let open!: () => void
  const gate = new Promise<void>((resolve) => {
    open = resolve
  })
  let calls = 0
  return {
    applied,
    open,
    handler: async (entries: readonly StreamEntry[]) => {
      if (calls++ === 0) await gate
      applied.push(...entries)
      return undefined
    },
  }
}

/** How many entries of `stream` are pending in group 'g' (delivered, not acknowledged). */
async function pendingCount(stream: string): Promise<number> {
  return Number(((await redis.xpending(stream, 'g')) as unknown[])[0])
}

describe('StreamGroupConsumer read ahead', () => {
  it('reads the next batch while a full batch is applied, one batch ahead at most, in order', async () => {
    const source = streamPair()
    const ids = await add(source.stream, 15)
    const held = heldHandler()
    // the fixture's claimIdleMs (150 ms) lets the claim round take back the held read-ahead
    // entries too: they must still be applied once
    const c = consumer({ sources: [source], batchSize: 5, handler: held.handler })
    await c.ensureGroups()
    c.start()
    // the first batch's apply is held: the second batch is delivered to the consumer meanwhile
    await until(async () => (await pendingCount(source.stream)) === 10, poll)
    // and not the third (the bound); a consumer that read on would have within a few polls
    await sleep(200)
    expect(await pendingCount(source.stream)).toBe(10)
    expect(held.applied).toEqual([])
    held.open()
    await until(() => held.applied.length >= 15, poll)
    expect(held.applied.map((e) => e.id)).toEqual(ids)
    await until(async () => (await pendingCount(source.stream)) === 0, poll)
    expect(c.stats.applied).toBe(15)
  })

  it('hands a batch read ahead back on stop: another consumer claims it at once, not after claimIdleMs', async () => {
    const source = streamPair()
    const ids = await add(source.stream, 10)
    const held = heldHandler()
    // claimIdleMs 60 s instead of the fixture's 150 ms: only the release can make the entries
    // claimable within this test (the default, 30 s, would too slowly for a test)
    const a = consumer({ sources: [source], batchSize: 5, claimIdleMs: 60_000, handler: held.handler })
    await a.ensureGroups()
    a.start()
    await until(async () => (await pendingCount(source.stream)) === 10, poll)
    const stopped = a.stop()
    held.open()
    await stopped
    expect(held.applied.map((e) => e.id)).toEqual(ids.slice(0, 5))
    expect(a.stats.released).toBe(5)
    // still pending to the stopped consumer, delivered once, but idle as if for claimIdleMs
    const pending = (await redis.xpending(source.stream, 'g', '-', '+', 10)) as [
      string,
      string,
      number,
      number,
    ][]
    expect(pending.map(([id]) => id)).toEqual(ids.slice(5))
    for (const [, owner, idleMs, deliveries] of pending) {
      expect(owner).toBe(a.name)
      expect(idleMs).toBeGreaterThanOrEqual(60_000)
      expect(deliveries).toBe(1)
    }
    const claimed: string[] = []
    const b = consumer({
      sources: [source],
      batchSize: 5,
      claimIdleMs: 60_000,
      handler: async (entries) => {
        claimed.push(...entries.map((e) => e.id))
        return undefined
      },
    })
    b.start()
    await until(() => claimed.length === 5, poll)
    expect(claimed).toEqual(ids.slice(5))
    expect(b.stats.claimed).toBe(5)
    await until(async () => (await pendingCount(source.stream)) === 0, poll)
  })
})
