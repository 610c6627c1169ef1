import { createRedisClient, Interactions, playViewer } from '../../../src/index.js'
import { report } from '../../support/processes.js'
import { whenReady } from './ready.js'

// argv: redisUrl prefix durationMs seed. Likes and favourites only ever added (no unlikes),
// plus plays, so every DB count can only grow: a decrease would come from the loss.
const [url, prefix, duration, seed] = process.argv.slice(2)
const redis = createRedisClient(url!, { commandTimeoutMs: 1000 })
const interactions = new Interactions(redis, { prefix: prefix!, partitions: 4 })
let state = Number(seed) || 1
const random = (n: number) => {
  state = (state * 1103515245 + 12345) % 2147483648
  return 1 + (state % n)
}
await whenReady(redis)
report({ ready: true })
const end = Date.now() + Number(duration)
let ok = 0
let errors = 0
while (Date.now() < end) {
  const video = random(20)
  const user = random(300)
  const dice = random(10)
  try {
    if (dice <= 6) await interactions.setLiked(video, user, true)
    else if (dice <= 8) await interactions.setFavorited(video, user, true)
    else await interactions.recordPlay(video, playViewer({ userId: user }))
    ok++
  } catch {
    errors++
  }
}
report({ done: true, ok, errors })
redis.disconnect()
