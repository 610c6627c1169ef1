// A process whose client points at a closed port: it lets ioredis fail to connect a few times, then
// disconnects and exits. Without an `error` listener Node prints "Unhandled error event" to stderr.
import { setTimeout as sleep } from 'node:timers/promises'
import { createRedisClient } from '../../../src/redis/index.js'

const client = createRedisClient(`redis://127.0.0.1:${process.argv[2]}`)
await sleep(400)
client.disconnect()
process.stdout.write('done\n')
