// Worker for mutex.processes.test.ts: acquires the shared mutex `count` times;
// inside each critical section it checks that nobody else is inside and logs
// its fencing token to a Redis list.
// argv: <prefix> <name> <count>
import { setTimeout as sleep } from 'node:timers/promises'
import { Mutex } from '../../src/lock/index.js'
import { KeySpace } from '../../src/redis/index.js'
import { report } from '../support/processes.js'
import { testRedisClient } from '../support/redis.js'

const [prefix = '', name = '', countArg = '0'] = process.argv.slice(2)
const redis = testRedisClient()
const space = new KeySpace(prefix)
const mutex = Mutex.named(redis, space, name, { ttlMs: 5000 })
const inside = space.tagged('check', name, 'inside')
const log = space.tagged('check', name, 'log')
const tokens: number[] = []
let overlaps = 0

report({ ready: true })
// start together, so the processes really contend
while ((await redis.exists(space.tagged('check', name, 'go'))) === 0) await sleep(5)
for (let i = 0; i < Number(countArg); i++) {
  const lease = await mutex.acquire({ waitMs: 20_000 })
  if ((await redis.incr(inside)) !== 1) overlaps++
  await redis.rpush(log, `${lease.fencingToken}:${process.pid}`)
  tokens.push(lease.fencingToken)
  await sleep(Math.random() * 2)
  await redis.decr(inside)
  if (!(await lease.release())) overlaps++
  await sleep(1 + Math.random() * 3) // work outside the lock, so others get their turn
}
report({ done: true, pid: process.pid, tokens, overlaps })
redis.disconnect()
