/**
 * Baseline read throughput of `GET /videos/:id` on a running video-api:
 * ids drawn Zipf(s=1) over the seeded popularity rank (`video_popularity`),
 * only published public live videos, so every answer is a 200.
 *
 * usage: node --import tsx bench/http/get-video.ts --url http://127.0.0.1:3000 --db postgres://.../va_bench
 *        [--duration 10] [--connections 50] [--uniform]
 */
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { popularIds } from '../support/popular_ids.js'
import { seededRandom, zipfSampler } from '../support/zipf.js'

const require = createRequire(import.meta.url)
type Request = { path?: string }
type Result = {
  requests: { average: number; total: number }
  latency: { p50: number; p99: number; average: number }
  non2xx: number
  errors: number
  timeouts: number
}
const autocannon = require('autocannon') as (
  options: Record<string, unknown>,
  done: (error: Error | null, result: Result) => void,
) => unknown

const { values } = parseArgs({
  options: {
    url: { type: 'string', default: 'http://127.0.0.1:3000' },
    db: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    uniform: { type: 'boolean', default: false },
  },
})
if (!values.db) throw new Error('--db <postgres url> is required (to read the popularity ranks)')

const ids = await popularIds(values.db)
if (ids.length === 0) throw new Error('no seeded videos: run npm run seed first')

// Zipf(s=1) over ranks; seeded so runs draw the same mix.
const random = seededRandom(12345)
const rank = zipfSampler(ids.length, 1, random)
const pick = (): string => ids[values.uniform ? Math.floor(random() * ids.length) : rank()]!

const result = await new Promise<Result>((resolve, reject) =>
  autocannon(
    {
      url: values.url,
      connections: Number(values.connections),
      duration: Number(values.duration),
      requests: [
        {
          method: 'GET',
          setupRequest: (req: Request) => {
            req.path = `/videos/${pick()}`
            return req
          },
        },
      ],
    },
    (error, r) => (error ? reject(error) : resolve(r)),
  ),
)
const summary = {
  scenario: `GET /videos/:id ${values.uniform ? 'uniform' : 'zipf(s=1)'} over ${ids.length} videos`,
  connections: Number(values.connections),
  durationS: Number(values.duration),
  requestsPerSecond: result.requests.average,
  totalRequests: result.requests.total,
  latencyMs: { p50: result.latency.p50, p99: result.latency.p99, mean: result.latency.average },
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
}
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`)
