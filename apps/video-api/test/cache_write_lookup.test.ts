// Issue 29: a write's video lookup (`getById(id, { write: true })`) does not sit out another
// process's stuck load. During a Redis Cluster failover every shard answers CLUSTERDOWN until the
// promotion, so a fill is refused and its lock stays until its TTL; a write that found the lock
// busy waited the cache's lockWaitMs (2 s) before reading PostgreSQL itself, and the failed
// shard's writes answered 503 after 1.7–2.1 s instead of within INTERACTION_WAIT_TIMEOUT_MS.
// A second cache on the same prefix plays the other process, holding the lock.
import { setTimeout as sleep } from 'node:timers/promises'
import { createCache } from 'floodgate'
import { afterAll, expect, it } from 'vitest'
import { CachedVideoReader, WRITE_LOCK_WAIT_MS } from '../src/cache/cached_reader.js'
import type { Video } from '../src/videos/model.js'
import type { VideoReader } from '../src/videos/reader.js'
import { deleteByPrefix, plainTestRedisClient } from './support/redis.js'

const redis = plainTestRedisClient()
const prefix = `va_t_wlk_${process.pid}:`

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

it('a write does not wait out another process holding the load lock; a read still waits for it', async () => {
  const row = { id: '7', title: 'held' } as unknown as Video
  let dbReads = 0
  const inner = {
    getById: async () => {
      dbReads++
      return row
    },
  } as unknown as VideoReader
  // the defaults a service uses: lockWaitMs 2 s. redisTimeoutMs 1000 (default 50 ms of idle loop):
  // the test times the lock wait, not Redis; a timed-out L2 read on a busy box would skip the wait
  const options = { redis, prefix, ttlMs: 60_000, redisTimeoutMs: 1000 }
  const other = createCache<Video>({ ...options, name: 'video' })
  const reader = new CachedVideoReader(
    inner,
    createCache<Video>({ ...options, name: 'video' }),
    createCache<Video[]>({ ...options, name: 'feed' }),
    1000,
  )
  let release = (_: Video) => {}
  const held = other.getOrLoad('7', () => new Promise<Video>((resolve) => (release = resolve)))
  await sleep(200) // the other cache holds the lock, its load never ends on its own

  const started = Date.now()
  expect(await reader.getById('7', { write: true })).toEqual(row)
  const writeMs = Date.now() - started
  // before: ~2,000 ms (lockWaitMs ± 200 ms jitter)
  expect(writeMs).toBeLessThan(WRITE_LOCK_WAIT_MS * 1.5 + 300)
  expect(dbReads).toBe(1)

  // a read (another reader, nothing in its L1) still waits for the other's load: no database read
  const fresh = new CachedVideoReader(
    inner,
    createCache<Video>({ ...options, name: 'video' }),
    createCache<Video[]>({ ...options, name: 'feed' }),
    1000,
  )
  const read = fresh.getById('7')
  await sleep(WRITE_LOCK_WAIT_MS * 3)
  release(row)
  expect(await read).toEqual(row)
  await held
  expect(dbReads).toBe(1)
})
