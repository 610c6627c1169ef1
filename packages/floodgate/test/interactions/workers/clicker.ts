/**
 * Worker: fires `clicks` concurrent double-clicks (two calls each, not awaited in between) for
 * every user in [firstUser, lastUser] at wall-clock `startAt` (ms). Args: prefix partitions video
 * firstUser lastUser like|unlike clicks startAt. Reports { results: [{ changed, count }] }.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { Interactions } from '../../../src/interactions/index.js'
import { report } from '../../support/processes.js'
import { testRedisClient } from '../../support/redis.js'

const [prefix, partitions, video, firstUser, lastUser, action, clicks, startAt] = process.argv.slice(2)
const redis = testRedisClient(5000)
const ix = new Interactions(redis, { prefix: prefix!, partitions: Number(partitions) })
await redis.ping()
await sleep(Math.max(0, Number(startAt) - Date.now()))
const calls: Promise<{ changed: boolean; count: number }>[] = []
for (let u = Number(firstUser); u <= Number(lastUser); u++) {
  for (let i = 0; i < Number(clicks); i++) {
    calls.push(ix.setLiked(video!, u, action === 'like'))
    calls.push(ix.setLiked(video!, u, action === 'like'))
  }
}
const results = (await Promise.all(calls)).map(({ changed, count }) => ({ changed, count }))
report({ results })
redis.disconnect()
