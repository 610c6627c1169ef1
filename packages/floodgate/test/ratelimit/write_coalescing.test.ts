import type { Socket } from 'node:net'
import { afterAll, describe, expect, it } from 'vitest'
import { createRateLimiter } from '../../src/index.js'
import { MAX_BATCH } from '../../src/ratelimit/write_coalescing.js'
import { deleteByPrefix, testRedis, uniquePrefix } from '../support/redis.js'

// Decisions issued in one tick leave in one writev (write coalescing), and stay exact.
const redis = testRedis()
const prefix = uniquePrefix('rl-coalesce')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

// Redis (not a fallback) must decide every call, even on a loaded machine.
const slowBoxSafe = { timeoutMs: 2000, fallback: 'failClosed' } as const

interface SocketWrites {
  write: number
  writev: number
  chunks: number
}

/** Counts the socket's low-level writes (`_write` per chunk, `_writev` per batch). */
function countWrites(socket: Socket): SocketWrites {
  const counts = { write: 0, writev: 0, chunks: 0 }
  const internals = socket as unknown as {
    _write: (...args: unknown[]) => void
    _writev: (chunks: unknown[], ...rest: unknown[]) => void
  }
  const write = internals._write
  const writev = internals._writev
  internals._write = function (this: Socket, ...args: unknown[]) {
    counts.write++
    counts.chunks++
    write.apply(this, args)
  }
  internals._writev = function (this: Socket, chunks: unknown[], ...rest: unknown[]) {
    counts.writev++
    counts.chunks += chunks.length
    writev.apply(this, [chunks, ...rest])
  }
  return counts
}

/**
 * The writes made by `fire()` and the tick it runs in, counted before any reply can arrive (a
 * reply needs an I/O callback, after this tick), so a NOSCRIPT reload (another test may run
 * SCRIPT FLUSH on the shared Redis) cannot add to them.
 */
async function writesOfOneTick<T>(socket: Socket, fire: () => Promise<T>): Promise<[SocketWrites, T]> {
  const counts = countWrites(socket)
  const pending = fire()
  await new Promise<void>((resolve) => process.nextTick(resolve))
  const snapshot = { ...counts }
  return [snapshot, await pending]
}

describe('write coalescing', () => {
  it('sends the decisions of one tick in one writev and keeps them exact', async () => {
    await redis.ping()
    const limiter = createRateLimiter({
      redis,
      prefix,
      algorithm: 'slidingLog', // exact in any trailing window: no window edge can let more in
      limit: 10,
      windowMs: 60_000,
      ...slowBoxSafe,
    })
    const [writes, results] = await writesOfOneTick(redis.stream as Socket, () =>
      Promise.all(Array.from({ length: MAX_BATCH }, () => limiter.limit('one-key'))),
    )
    expect(writes).toEqual({ write: 0, writev: 1, chunks: MAX_BATCH })
    expect(results.every((r) => r.source === 'redis')).toBe(true)
    expect(results.filter((r) => r.allowed)).toHaveLength(10)
  })

  it('splits a tick of more than MAX_BATCH decisions into writes of MAX_BATCH', async () => {
    const limiter = createRateLimiter({
      redis,
      prefix,
      algorithm: 'slidingWindow',
      limit: 1000,
      windowMs: 60_000,
      ...slowBoxSafe,
    })
    const count = 2 * MAX_BATCH + 5
    const [writes, results] = await writesOfOneTick(redis.stream as Socket, () =>
      Promise.all(Array.from({ length: count }, (_, i) => limiter.limit(`k${i % 3}`))),
    )
    expect(writes).toEqual({ write: 0, writev: 3, chunks: count })
    expect(results.every((r) => r.allowed && r.source === 'redis')).toBe(true)
  })

  it('writes at once when one decision is in flight, and each tick starts a new batch', async () => {
    const limiter = createRateLimiter({
      redis,
      prefix,
      algorithm: 'gcra',
      limit: 5,
      windowMs: 60_000,
      ...slowBoxSafe,
    })
    const socket = redis.stream as Socket
    const [one, first] = await writesOfOneTick(socket, () => limiter.limit('solo'))
    expect(one).toEqual({ write: 1, writev: 0, chunks: 1 })
    expect(first.allowed).toBe(true)
    const [two, [a, b]] = await writesOfOneTick(socket, () =>
      Promise.all([limiter.limit('solo'), limiter.limit('solo')]),
    )
    expect(two).toEqual({ write: 0, writev: 1, chunks: 2 })
    expect(a.remaining).toBe(3)
    expect(b.remaining).toBe(2)
  })
})
