// Lock: 10 concurrent jobs under one mutex run one at a time, each with a higher fencing token.
import { Mutex } from 'floodgate/lock'
import { cleanUp, connect, prefix } from '../connect.js'

const redis = await connect()
const mutex = new Mutex(redis, { lock: `${prefix}:{job}:lock`, fence: `${prefix}:{job}:fence` })

let inside = 0
let overlapped = false
const tokens: number[] = []
await Promise.all(
  Array.from({ length: 10 }, () =>
    mutex.withLock(async (lease) => {
      if (++inside > 1) overlapped = true
      tokens.push(lease.fencingToken)
      await new Promise((resolve) => setTimeout(resolve, 5))
      inside--
    }),
  ),
)

console.log(`lock: 10 jobs, fencing tokens ${tokens.join(',')}, overlapped: ${overlapped}`)
await cleanUp(redis)
await redis.quit()
if (overlapped || tokens.some((t, i) => i > 0 && t <= tokens[i - 1]!)) process.exit(1)
