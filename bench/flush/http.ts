/**
 * Like-toggle throughput through HTTP: starts video-api (apps/video-api/src/main.ts) on a
 * throw-away schema and Redis prefix, registers users, creates one video, then drives
 * `PUT|DELETE /videos/:id/like` (alternating per user, rotating bearer tokens) with autocannon,
 * beside `GET /videos/:id` on the same server as the baseline. Rate limiting and seeding are off.
 *
 *   node --conditions=floodgate-source --import tsx bench/flush/http.ts [--duration 10] [--connections 50]
 *
 * Writes bench/results/flush_http.json.
 */
import type { ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { parseArgs } from 'node:util'
import { deleteByPrefix, dropSchema, freePort } from '@floodgate/test-support'
import { Redis } from 'ioredis'
import { spawnTs } from '../support/spawn_ts.js'

const require = createRequire(import.meta.url)
type Request = { path?: string; method?: string; headers?: Record<string, string> }
type Result = {
  requests: { average: number; total: number }
  latency: { p50: number; p99: number; average: number }
  non2xx: number
  errors: number
  statusCodeStats?: Record<string, { count: number }>
}
const autocannon = require('autocannon') as (
  options: Record<string, unknown>,
  done: (error: Error | null, result: Result) => void,
) => unknown

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    users: { type: 'string', default: '200' },
  },
})
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test'
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const schema = `bench_http_${randomBytes(4).toString('hex')}`
const prefix = `bench_http_${randomBytes(4).toString('hex')}`

const port = await freePort()
const base = `http://127.0.0.1:${port}`
const server: ChildProcess = spawnTs(new URL('../../apps/video-api/src/main.ts', import.meta.url), [], {
  stdio: ['ignore', 'ignore', 'inherit'],
  env: {
    ...process.env,
    PORT: String(port),
    DATABASE_URL,
    DB_SCHEMA: schema,
    REDIS_URL,
    REDIS_PREFIX: prefix,
    JWT_SECRET: randomBytes(32).toString('hex'),
    RATE_LIMIT_ENABLED: 'false',
    SEED_ON_EMPTY: 'false',
    LOG_LEVEL: 'warn',
  },
})

async function json(method: string, path: string, body?: unknown, token?: string) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as Record<string, string>
}

function run(requests: Record<string, unknown>[]): Promise<Result> {
  return new Promise((resolve, reject) =>
    autocannon(
      { url: base, connections: Number(values.connections), duration: Number(values.duration), requests },
      (error, r) => (error ? reject(error) : resolve(r)),
    ),
  )
}

try {
  for (let i = 0; ; i++) {
    const up = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
    if (up) break
    if (i > 300) throw new Error('video-api did not start')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const tokens: string[] = []
  for (let i = 0; i < Number(values.users); i++) {
    const r = await json('POST', '/auth/register', {
      username: `bench_${i}_${randomBytes(2).toString('hex')}`,
      password: 'bench-password-1',
    })
    tokens.push(r.token!)
  }
  const video = await json(
    'POST',
    '/videos',
    {
      title: 'bench',
      coverUrl: 'https://cdn.example.com/c.jpg',
      playUrl: 'https://cdn.example.com/v.mp4',
      status: 'published',
    },
    tokens[0],
  )
  let n = 0
  const liked = tokens.map(() => false)
  const toggle = await run([
    {
      setupRequest: (req: Request) => {
        const user = n++ % tokens.length
        liked[user] = !liked[user]
        req.method = liked[user] ? 'PUT' : 'DELETE'
        req.path = `/videos/${video.id}/like`
        req.headers = { authorization: `Bearer ${tokens[user]}` }
        return req
      },
    },
  ])
  const read = await run([{ method: 'GET', path: `/videos/${video.id}` }])
  const row = (label: string, r: Result) => ({
    scenario: label,
    requestsPerSecond: r.requests.average,
    latencyMs: { p50: r.latency.p50, p99: r.latency.p99 },
    non2xx: r.non2xx,
    statusCodes: Object.fromEntries(
      Object.entries(r.statusCodeStats ?? {}).map(([code, v]) => [code, v.count]),
    ),
    errors: r.errors,
  })
  const result = {
    date: new Date().toISOString(),
    connections: Number(values.connections),
    durationS: Number(values.duration),
    rows: [
      row('PUT/DELETE /videos/:id/like (alternating, 200 users)', toggle),
      row('GET /videos/:id (baseline)', read),
    ],
  }
  writeFileSync(
    new URL('../results/flush_http.json', import.meta.url),
    `${JSON.stringify(result, null, 2)}\n`,
  )
  console.log('| HTTP (autocannon) | req/s | p50 ms | p99 ms | status codes |\n|---|---|---|---|---|')
  for (const r of result.rows)
    console.log(
      `| ${r.scenario} | ${r.requestsPerSecond} | ${r.latencyMs.p50} | ${r.latencyMs.p99} | ${JSON.stringify(r.statusCodes)} |`,
    )
} finally {
  server.kill('SIGTERM')
  await new Promise((resolve) => server.once('exit', resolve))
  await dropSchema(schema, DATABASE_URL)
  const redis = new Redis(REDIS_URL)
  await deleteByPrefix(redis, prefix)
  redis.disconnect()
}
