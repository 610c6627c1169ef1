// Worker for bloom_rebuild.processes.test.ts: "creates entities": commits each
// item to a Redis list (the stand-in for the database), then adds it to the
// filter. A fixed number of adds, in `phases` phases: phase r starts once the
// test's rebuild round r + 1 has taken its snapshot (the `round` key), so adds
// race every rebuild however fast or slow this machine is. Reports how many
// adds resolved.
// argv: <prefix> <name> <label> <batchesPerPhase> <phases>
import { setTimeout as sleep } from 'node:timers/promises'
import { BloomFilter } from '../../src/bloom/index.js'
import { KeySpace } from '../../src/redis/index.js'
import { report } from '../support/processes.js'
import { testRedisClient } from '../support/redis.js'

const [prefix = '', name = '', label = '', perPhaseArg = '25', phasesArg = '4'] = process.argv.slice(2)
const redis = testRedisClient()
const keySpace = new KeySpace(prefix)
const bloom = new BloomFilter({ redis, keySpace, name, bits: 200_000, hashes: 7, shards: 3 })
const db = keySpace.plain('db', name)
const round = keySpace.plain('round', name)

report({ ready: true })
let added = 0
let failed = 0
outer: for (let phase = 0; phase < Number(phasesArg); phase++) {
  while (Number((await redis.get(round)) ?? 0) < phase + 1) await sleep(5)
  for (let b = 0; b < Number(perPhaseArg); b++) {
    const batch = [0, 1, 2].map((j) => `${label}:${added + j}`)
    await redis.rpush(db, ...batch) // committed to the source of truth first
    try {
      await bloom.add(batch)
      added += batch.length
    } catch {
      failed++
      break outer
    }
    await sleep(Math.random() * 2)
  }
}
report({ done: true, label, added, failed })
redis.disconnect()
