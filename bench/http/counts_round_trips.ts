/**
 * Redis round trips for live counts per cached `GET /videos/:id`, with client tracking on and
 * off (COUNTS_TRACKING), each on its own fresh service process (apps/video-api main.ts):
 * a warm-up replays a seeded Zipf(1) id sequence over the seeded popularity (every id then read
 * once), then the same sequence is replayed and measured:
 * - counts round trips = the service's `floodgate_counts_layer_events_total{event="redis_read"}`
 *   delta (one pipelined counts read per round trip);
 * - Redis commands naming the key prefix (MONITOR on the shared Redis), per request.
 * Rate limiting is off: its one round trip per request is the limiter's (another mode's subject);
 * the default (on) adds exactly one EVALSHA per request to both rows.
 *
 * usage: node --conditions=floodgate-source --import tsx bench/http/counts_round_trips.ts \
 *          --db postgres://postgres@127.0.0.1:5432/va_bench [--redis redis://127.0.0.1:6379] \
 *          [--requests 5000] [--concurrency 10] [--pause-ms 1500]
 * The database must be seeded (npm run seed -w video-api -- --users 2000 --videos 20000).
 */
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Redis } from 'ioredis'
import { popularIds } from '../support/popular_ids.js'
import { startVideoApi } from '../support/video_api_process.js'
import { seededRandom, zipfSampler } from '../support/zipf.js'

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    redis: { type: 'string', default: 'redis://127.0.0.1:6379' },
    requests: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '10' },
    // pause between warm-up and run (ms): longer than COUNTS_MAX_AGE_MS (1 s), so without
    // tracking every id is read again, as in any steady state longer than a second
    'pause-ms': { type: 'string', default: '1500' },
  },
})
if (!values.db) throw new Error('--db <postgres url> is required')

async function replay(port: number, paths: readonly string[]): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Number(values.concurrency) }, async () => {
      while (next < paths.length) {
        const path = paths[next++]!
        const response = await fetch(`http://127.0.0.1:${port}${path}`)
        await response.arrayBuffer()
        if (response.status !== 200) throw new Error(`${path}: ${response.status}`)
      }
    }),
  )
}

async function countsEvents(port: number): Promise<Record<string, number>> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text())
  return Object.fromEntries(
    [...text.matchAll(/^floodgate_counts_layer_events_total\{event="(\w+)"\} (\d+)/gm)].map((m) => [
      m[1]!,
      Number(m[2]),
    ]),
  )
}

async function measure(tracking: boolean, paths: readonly string[]) {
  const prefix = `vacounts-${randomBytes(3).toString('hex')}`
  const service = await startVideoApi({
    db: values.db!,
    redis: values.redis!,
    prefix,
    env: { COUNTS_TRACKING: String(tracking), RATE_LIMIT_ENABLED: 'false' },
  })
  const port = service.port
  try {
    await replay(port, paths) // warm-up: the video cache's L1 and the counts layer see every id
    await sleep(Number(values['pause-ms']))
    const monitorClient = new Redis(values.redis!)
    monitorClient.on('error', () => undefined)
    const monitor = await monitorClient.monitor()
    // a reply MONITOR's parser cannot place is emitted as an error: one uncounted command, not a crash
    monitor.on('error', () => undefined)
    let commands = 0
    const byCommand: Record<string, number> = {}
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (!args.some((a) => a.includes(prefix))) return
      commands++
      const name = `${args[0]} ${args[1]?.replace(prefix, '')?.slice(0, 14) ?? ''}`
      byCommand[name] = (byCommand[name] ?? 0) + 1
    })
    await sleep(200)
    const before = await countsEvents(port)
    const startedMs = performance.now()
    await replay(port, paths)
    const elapsedMs = performance.now() - startedMs
    const after = await countsEvents(port)
    await sleep(300)
    monitor.disconnect()
    monitorClient.disconnect()
    const delta = (event: string) => (after[event] ?? 0) - (before[event] ?? 0)
    return {
      tracking,
      requests: paths.length,
      countsRoundTrips: delta('redis_read'),
      countsRoundTripsPerRequest: +(delta('redis_read') / paths.length).toFixed(4),
      trackedHits: delta('tracked_hit'),
      localHits: delta('local_hit'),
      redisCommandsPerRequest: +(commands / paths.length).toFixed(3),
      requestsPerSecondUnderMonitor: Math.round(paths.length / (elapsedMs / 1000)),
      topCommands: Object.fromEntries(
        Object.entries(byCommand)
          .sort((a, b) => b[1] - a[1])
          .slice(0, 6),
      ),
    }
  } finally {
    await service.stop()
  }
}

const ids = await popularIds(values.db)
if (ids.length === 0) throw new Error('no seeded videos: run npm run seed first')
const rank = zipfSampler(ids.length, 1, seededRandom(12345))
const paths = Array.from({ length: Number(values.requests) }, () => `/videos/${ids[rank()]}`)
const rows = [await measure(false, paths), await measure(true, paths)]
console.log(JSON.stringify(rows, null, 2))
console.log('\n| COUNTS_TRACKING | counts round trips / request | Redis commands / request |')
console.log('| --- | --- | --- |')
for (const r of rows)
  console.log(`| ${r.tracking} | ${r.countsRoundTripsPerRequest} | ${r.redisCommandsPerRequest} |`)
process.exit(0)
