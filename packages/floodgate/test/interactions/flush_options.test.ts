// Issue 26: the flush applies up to 5,000 entries per transaction unless told otherwise (bench:flush
// at 300 partitions: less PostgreSQL and consumer CPU per event than the stream consumer's 1,000).
import { afterAll, expect, it } from 'vitest'
import { createInteractionFlush } from '../../src/interactions/index.js'
import type { SqlDatabase } from '../../src/sql/executor.js'
import { testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient(5000)
// never called: the consumers are built, not started
const db = {} as SqlDatabase

afterAll(() => redis.disconnect())

it('batches 5,000 entries per transaction by default, and what it is given otherwise', async () => {
  const prefix = uniquePrefix('ix-flush-options')
  const byDefault = createInteractionFlush(redis, db, { prefix })
  const given = createInteractionFlush(redis, db, { prefix, batchSize: 250 })
  try {
    expect(byDefault.options.batchSize).toBe(5000)
    expect(given.options.batchSize).toBe(250)
  } finally {
    await byDefault.stop()
    await given.stop()
  }
})
