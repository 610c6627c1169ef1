// Worker for replica tests: "creates entities" in another process. Adds `count` items
// `<label>:<i>` one by one through its own BloomFilter and reports each right after its add
// resolved, so the test can query it at once from its replica.
// argv: <prefix> <name> <label> <count> <bits> <hashes>
import { BloomFilter } from '../../src/bloom/index.js'
import { KeySpace } from '../../src/redis/index.js'
import { report } from '../support/processes.js'
import { testRedisClient } from '../support/redis.js'

const [prefix = '', name = '', label = '', countArg = '0', bitsArg = '0', hashesArg = '0'] =
  process.argv.slice(2)
const redis = testRedisClient()
const bloom = new BloomFilter({
  redis,
  keySpace: new KeySpace(prefix),
  name,
  bits: Number(bitsArg),
  hashes: Number(hashesArg),
})

report({ ready: true })
let failed = 0
for (let i = 0; i < Number(countArg); i++) {
  const item = `${label}:${i}`
  try {
    await bloom.add([item])
    report({ added: item })
  } catch {
    failed++
  }
}
report({ done: true, failed })
redis.disconnect()
