// Worker for lease_deadline.test.ts: holds a watchdog lock through a Redis URL the test then
// stalls, and reports when its lease's signal aborted (local clock, ms since the epoch).
// argv: <redisUrl> <name> <ttlMs> <commandTimeoutMs>
import { createRedisClient, KeySpace, type LockLostError, Mutex } from '../../src/index.js'
import { report } from '../support/processes.js'

const [url = '', name = '', ttlMs = '0', commandTimeoutMs = '0'] = process.argv.slice(2)
const redis = createRedisClient(url, { commandTimeoutMs: Number(commandTimeoutMs) })
redis.on('error', () => {})
await new Promise((resolve) => redis.once('ready', resolve))
const mutex = Mutex.named(redis, new KeySpace('lease'), name, { ttlMs: Number(ttlMs), watchdog: true })
const sentAt = Date.now()
const lease = await mutex.tryAcquire()
if (!lease) throw new Error('not acquired')
const aborted = new Promise<number>((resolve) =>
  lease.signal.addEventListener('abort', () => resolve(Date.now())),
)
report({ acquired: true, sentAt, fencingToken: lease.fencingToken })
const abortedAt = await aborted
report({ abortedAt, reason: (lease.signal.reason as LockLostError).reason })
process.exit(0) // a renewal may still wait on the stalled connection
