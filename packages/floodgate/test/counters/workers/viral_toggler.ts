import { setTimeout as sleep } from 'node:timers/promises'
import { CountsRecovery, createRedisClient, Interactions, type RecoveryEvent } from '../../../src/index.js'
import { pgPoolDatabase } from '../../../src/sql/executor.js'
import { prng } from '../../support/prng.js'
import { report } from '../../support/processes.js'
import { schemaPool } from '../pg_schema.js'
import { whenReady } from './ready.js'

// argv: redisUrl prefix schema items users (both comma-separated) maxDurationMs seed; runs until
// SIGTERM. A service instance liking and unliking items: its own CountsRecovery, and before a toggle
// while `serving()` is false its item restored first (as video-api's interaction routes do).
// Lanes own disjoint users, so each user's toggles are sequential and its last answer is its state.
// SIGUSR1 pauses (reports `paused` once no toggle is in flight); SIGUSR2 checks the marker, then
// resumes: the test's loss happens between the two, so no toggle runs before its instance knows.
const [url, prefix, schema, itemList, userList, duration, seed] = process.argv.slice(2)
const LANES = 4
// 5 s (default 2 s): a restore step of the 150k-liker item queues behind the others at load 6-19;
// the test asserts exactness and step CPU, and a timed-out toggle would be an unknown answer
const redis = createRedisClient(url!, { commandTimeoutMs: 5000 })
const pool = schemaPool(schema!, 3)
const events: RecoveryEvent['type'][] = []
let rebuiltRows = -1
const recovery = new CountsRecovery({
  redis,
  sql: pgPoolDatabase(pool),
  prefix: prefix!,
  partitions: 4,
  checkIntervalMs: 50,
  chunkSize: 2000,
  onEvent: (e) => {
    events.push(e.type)
    if (e.type === 'rebuilt') rebuiltRows = e.report.likeRows
  },
})
const ix = new Interactions(redis, { prefix: prefix!, partitions: 4 })
const items = itemList!.split(',')
const users = userList!.split(',')
const next = prng(Number(seed) || 1)
const random = (n: number) => Math.floor(next() * n)

let paused = false
let stopping = false
let idle = 0
process.on('SIGTERM', () => {
  stopping = true
})
process.on('SIGUSR1', () => {
  paused = true
})
process.on('SIGUSR2', () => {
  void recovery.check().then(() => {
    paused = false
    report({ resumed: true, serving: recovery.serving() })
  })
})

await whenReady(redis)
recovery.start()
await recovery.check() // serving, or rebuilding (a migration): toggles then restore their item first
report({ ready: true })

/** [item, user, desired (1/0), answered active (1/0) or -1 failed, ack time ms, restored first (1/0)], in ack order per item and user. */
const acks: [string, string, number, number, number, number][] = []
let errors = 0
let restoreErrors = 0
const restoreMs: number[] = []
const end = Date.now() + Number(duration)
const lane = async (l: number) => {
  const mine = users.filter((_, i) => i % LANES === l)
  while (!stopping && Date.now() < end) {
    if (paused) {
      idle++
      if (idle === LANES) report({ paused: true })
      while (paused) await sleep(5)
      idle--
      continue
    }
    const itemId = items[random(items.length)]!
    const user = mine[random(mine.length)]!
    const desired = random(2) === 1
    let restored = 0
    if (!recovery.serving()) {
      restored = 1
      const started = Date.now()
      await recovery.restoreItem(itemId).catch(() => void restoreErrors++)
      restoreMs.push(Date.now() - started)
    }
    try {
      const answer = await ix.setLiked(itemId, user, desired)
      acks.push([itemId, user, desired ? 1 : 0, answer.active ? 1 : 0, Date.now(), restored])
    } catch {
      errors++
      acks.push([itemId, user, desired ? 1 : 0, -1, Date.now(), restored]) // state unknown until its next answer
    }
  }
}
await Promise.all(Array.from({ length: LANES }, (_, l) => lane(l)))
await recovery.stop()
report({ done: true, acks, errors, restoreErrors, restoreMs, events, rebuiltRows })
redis.disconnect()
await pool.end()
