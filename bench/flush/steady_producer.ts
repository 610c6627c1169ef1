/**
 * Child process of bench/flush/run.ts: emits interaction events at a steady rate through the
 * library (half plays by fresh viewers, half like flips), in 10 ms ticks.
 * Args: prefix partitions ratePerSecond seconds videos. Prints one JSON line { sent, events, failed } at the end.
 */
import { Interactions } from 'floodgate'
import { Redis } from 'ioredis'

const [prefix, partitions, rate, seconds, videos] = process.argv
  .slice(2)
  .map((a, i) => (i === 0 ? a : Number(a))) as [string, number, number, number, number]
const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { commandTimeout: 5000 })
const ix = new Interactions(redis, { prefix, partitions })
const liked = new Set<string>()
let sent = 0
let events = 0
let failed = 0
let viewer = 0
const inflight = new Set<Promise<void>>()
const started = Date.now()
const total = rate * seconds
while (sent < total) {
  const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate))
  while (sent < due) {
    sent++
    const video = 1 + (sent % videos)
    let call: Promise<boolean>
    if (sent % 2 === 0) {
      call = ix.recordPlay(video, `u${++viewer}`).then((r) => r.counted)
    } else {
      const key = `${video}:${1 + (sent % 997)}`
      const next = !liked.has(key)
      if (next) liked.add(key)
      else liked.delete(key)
      call = ix.setLiked(video, 1 + (sent % 997), next).then((r) => r.changed)
    }
    // a call that fails (Redis too slow on a busy box) is counted, not fatal: the lag is of the rest
    const p = call.then(
      (changed) => {
        if (changed) events++
        inflight.delete(p)
      },
      () => {
        failed++
        inflight.delete(p)
      },
    )
    inflight.add(p)
  }
  await new Promise((resolve) => setTimeout(resolve, 10))
}
await Promise.all(inflight)
process.stdout.write(`${JSON.stringify({ sent, events, failed })}\n`)
redis.disconnect()
