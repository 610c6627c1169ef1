// Worker for bloom_rebuild.processes.test.ts: "creates entities" until told to
// stop: commits each item to a Redis list (the stand-in for the database),
// then adds it to the filter. Reports how many adds resolved.
// argv: <prefix> <name> <label>
import { setTimeout as sleep } from 'node:timers/promises'
import { BloomFilter } from '../../src/bloom/index.js'
import { KeySpace } from '../../src/redis/index.js'
import { report } from '../support/processes.js'
import { testRedis } from '../support/redis.js'

const [prefix = '', name = '', label = ''] = process.argv.slice(2)
const redis = testRedis()
const keySpace = new KeySpace(prefix)
const bloom = new BloomFilter({ redis, keySpace, name, bits: 200_000, hashes: 7, shards: 3 })
const db = keySpace.plain('db', name)
const stop = keySpace.plain('stop', name)

report({ ready: true })
let added = 0
let failed = 0
while ((await redis.exists(stop)) === 0) {
  const batch = [0, 1, 2].map((j) => `${label}:${added + j}`)
  await redis.rpush(db, ...batch) // committed to the source of truth first
  try {
    await bloom.add(batch)
    added += batch.length
  } catch {
    failed++
    break
  }
  await sleep(Math.random() * 2)
}
report({ done: true, label, added, failed })
redis.disconnect()
