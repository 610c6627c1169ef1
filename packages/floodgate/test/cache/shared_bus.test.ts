import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { spawnWorker } from '../support/processes.js'
import { deleteByPrefix, testRedisClient, uniquePrefix } from '../support/redis.js'

const redis = testRedisClient()
const prefix = uniquePrefix('cache-bus-shared')

afterAll(async () => {
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
})

// CLIENT LIST answers for the one node it reaches; on a cluster the subscriber may sit on another
describe.skipIf(process.env.FLOODGATE_TEST_REDIS_CLUSTER)('one pub/sub connection per client', () => {
  it('three caches share one subscriber, and the process exits after redis.quit()', async () => {
    const name = `fg-quit-${randomBytes(4).toString('hex')}`
    const worker = spawnWorker(new URL('./workers/quit_exits.ts', import.meta.url), [prefix, name])
    // SIGKILL here means the process was still alive 5 s after quit() (a subscriber kept it up)
    const timer = setTimeout(() => worker.child.kill('SIGKILL'), 5000)
    try {
      const report = (await worker.waitFor((m) => typeof m === 'object' && m !== null && 'pubsub' in m)) as {
        pubsub: number
      }
      const exit = await worker.exited
      expect({ pubsub: report.pubsub, exit }).toEqual({ pubsub: 1, exit: 0 })
    } finally {
      clearTimeout(timer)
      worker.child.kill('SIGKILL')
    }
  })
})
