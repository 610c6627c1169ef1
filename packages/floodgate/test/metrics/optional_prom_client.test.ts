import { afterAll, describe, expect, it } from 'vitest'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, TEST_REDIS_URL, testRedis, uniquePrefix } from '../support/redis.js'

const redis = testRedis()
const prefix = uniquePrefix('noprom')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

describe('prom-client is an optional peer', () => {
  it('floodgate imports and decides in a process where prom-client cannot be resolved', async () => {
    const worker = spawnWorker(new URL('./workers/without_prom_client.ts', import.meta.url), [
      TEST_REDIS_URL,
      prefix,
    ])
    const report = await worker.waitFor(() => true, 20_000)
    await worker.exited
    expect(report).toEqual({ source: 'redis' })
  })
})
