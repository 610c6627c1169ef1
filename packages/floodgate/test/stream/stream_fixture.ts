import { afterAll } from 'vitest'
import { type StreamConsumerOptions, StreamGroupConsumer } from '../../src/stream/index.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

/** until()'s options for these tests: several checks ask Redis, so a 20 ms poll; 10 s for a loaded machine. */
export const poll = { timeoutMs: 10_000, everyMs: 20 }

/**
 * The stream tests' Redis client, key prefix and builders; stops the consumers it built and deletes
 * the prefix's keys after the file's tests.
 */
export function streamFixture() {
  const redis = testRedisClient()
  const prefix = uniquePrefix('stream')
  let n = 0
  const consumers: StreamGroupConsumer[] = []

  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.stop()))
    await deleteByPrefix(redis, prefix)
    redis.disconnect()
  })

  /** A new stream and its dead-letter stream, in one hash slot. */
  function streamPair() {
    n++
    return { stream: `${prefix}:{s${n}}:stream`, deadLetter: `${prefix}:{s${n}}:dead` }
  }

  /** A members key named after the last {@link streamPair}. */
  const lastMembersKey = () => `${prefix}:members:${n}`

  /** XADDs `count` entries (fields `fields(i)`); resolves with their ids. */
  async function add(
    stream: string,
    count: number,
    fields: (i: number) => string[] = (i) => ['i', String(i)],
  ) {
    const ids: string[] = []
    for (let i = 0; i < count; i++) ids.push((await redis.xadd(stream, '*', ...fields(i))) as string)
    return ids
  }

  /** A consumer of group 'g' with short intervals (ms) for a test, stopped after the file. */
  function consumer(
    options: Partial<StreamConsumerOptions> & Pick<StreamConsumerOptions, 'sources' | 'handler'>,
  ) {
    const c = new StreamGroupConsumer(redis, {
      group: 'g',
      blockMs: 100,
      claimIdleMs: 150,
      claimIntervalMs: 50,
      maintenanceIntervalMs: 100,
      backoffBaseMs: 10,
      backoffMaxMs: 50,
      ...options,
    })
    consumers.push(c)
    return c
  }

  return { redis, prefix, streamPair, lastMembersKey, add, consumer }
}
