import { ClientTracking, CountsReader, createRedisClient, LiveCounts } from '../../../src/index.js'
import { report } from '../../support/processes.js'
import { whenReady } from './ready.js'

// argv: redisUrl prefix. One service instance reading video 1's counts through LiveCounts with
// client tracking, about every millisecond, reporting each change of the like count it serves
// (with the wall clock, to time invalidations across processes). Stats on SIGTERM.
const [url, prefix] = process.argv.slice(2)
const redis = createRedisClient(url!, { commandTimeoutMs: 2000 })
const tracking = new ClientTracking(redis)
const live = new LiveCounts({
  reader: new CountsReader({ redis, prefix: prefix!, partitions: 4, timeoutMs: 500 }),
  fallback: async () => undefined,
  tracking,
})
await whenReady(redis)
if (!(await tracking.whenEstablished(10_000))) throw new Error('tracking not established')
let reads = 0
let last: number | undefined
let stopping = false
process.once('SIGTERM', () => {
  stopping = true
})
report({ ready: true })
while (!stopping) {
  const counts = (await live.read(['1'])).counts.get('1')
  reads++
  if (counts?.likes !== last) {
    last = counts?.likes
    report({ likes: last, atMs: Date.now(), stale: counts?.stale })
  }
  await new Promise((resolve) => setTimeout(resolve, 1))
}
report({ done: true, reads, stats: live.stats, tracking: tracking.stats })
live.close()
tracking.close()
redis.disconnect()
