/**
 * Worker: random interactions through the library. Args: prefix partitions videos users ops
 * concurrency seed dedupeWindowMs [opsPerSecond, 0 = as fast as possible] [stopKey].
 * With `stopKey`, it keeps producing after `ops` operations until that Redis key exists (so the
 * test, not the machine's speed, decides when production ends). Reports { done, events,
 * playEventIds } at the end.
 */
import { Interactions, playViewer } from '../../../src/interactions/index.js'
import { report } from '../../support/processes.js'
import { testRedisClient } from '../../support/redis.js'

const [prefix, partitions, videos, users, ops, concurrency, seed, dedupeMs, rate, stopKey] =
  process.argv.slice(2)
const opsPerSecond = Number(rate ?? 0)
let state = Number(seed) >>> 0 || 1
const random = () => {
  // xorshift32: deterministic per worker
  state ^= state << 13
  state ^= state >>> 17
  state ^= state << 5
  return (state >>> 0) / 4294967296
}
const pick = (n: number) => 1 + Math.floor(random() * n)

const redis = testRedisClient(5000)
const ix = new Interactions(redis, {
  prefix: prefix!,
  partitions: Number(partitions),
  playDedupeWindowMs: Number(dedupeMs),
})
let remaining = Number(ops)
let stopped = stopKey === undefined
const poll = stopKey
  ? setInterval(() => {
      redis.exists(stopKey).then(
        (n) => {
          stopped = n === 1
        },
        () => undefined,
      )
    }, 50)
  : undefined
let issued = 0
const started = Date.now()
let events = 0
const playEventIds: string[] = []

async function lane(): Promise<void> {
  while (remaining > 0 || !stopped) {
    remaining--
    if (opsPerSecond > 0) {
      const due = started + (issued++ / opsPerSecond) * 1000
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()))
    }
    const video = pick(Number(videos))
    const r = random()
    if (r < 0.45) {
      const out = await ix.setLiked(video, pick(Number(users)), random() < 0.6)
      if (out.changed) events++
    } else if (r < 0.65) {
      const out = await ix.setFavorited(video, pick(Number(users)), random() < 0.6)
      if (out.changed) events++
    } else {
      const viewer =
        random() < 0.5
          ? playViewer({ userId: pick(Number(users)) })
          : playViewer({ ip: `10.0.0.${pick(250)}`, userAgent: 'w' })
      const out = await ix.recordPlay(video, viewer)
      if (out.counted) {
        events++
        playEventIds.push(`${video}:${out.eventId}`)
      }
    }
  }
}

await Promise.all(Array.from({ length: Number(concurrency) }, lane))
clearInterval(poll)
report({ done: true, events, playEventIds })
redis.disconnect()
