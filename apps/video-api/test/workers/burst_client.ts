import { Agent, request } from 'node:http'
import { report } from '../support/workers.js'

/**
 * Worker: one client firing a closed-loop burst of GETs over several service instances.
 *
 * argv[2] is a JSON {@link BurstSpec}. `concurrency` loops each keep one request in flight;
 * request i goes to `bases[i % bases.length]` with path `paths[i % paths.length]`. The burst
 * stops after `total` requests or, without `total`, after `durationMs`. Loop w connects from
 * source address 127.<s div 62500>.<s div 250 mod 250>.<s mod 250 + 2>, s = `firstSource` + w, when
 * `spreadSources` (Linux routes the whole 127/8 to loopback), so a flood of many clients is not
 * one IP's quota.
 *
 * Reports, as JSON lines: `{ event: 'started', atMs }` when the first requests go out, then one
 * {@link BurstReport}.
 */
export interface BurstSpec {
  bases: string[]
  paths: string[]
  concurrency: number
  total?: number
  /** Used when `total` is absent (ms). */
  durationMs?: number
  headers?: Record<string, string>
  spreadSources?: boolean
  /** Index of the first source address (see above); runBurst gives each burst fresh ones. */
  firstSource?: number
  /** Per-request timeout (ms); a request past it counts in `errors`. */
  timeoutMs: number
  /**
   * The quota of the one limiter key every request counts against, when the headers are to be
   * checked: see {@link BurstReport.remainingAboveTruth}.
   */
  quota?: number
}

export interface BurstReport {
  event: 'done'
  requests: number
  /** Status code → responses. */
  statuses: Record<string, number>
  /** Client-side failures (reset, refused, timeout), by message. */
  errors: Record<string, number>
  /** 2xx bodies carrying `countsStale: true`. */
  countsStale: number
  /** 503 responses without `application/problem+json` or without `Retry-After`. */
  bad503: number
  /** 5xx other than 503. */
  other5xx: number
  /** Latency percentiles over all responses (ms). */
  p50Ms: number
  p99Ms: number
  maxMs: number
  /** The longest response (ms) per status code. */
  maxMsByStatus: Record<string, number>
  /** Wall time of the burst (ms). */
  wallMs: number
  /** Outcomes (status code or `error`) per 500 ms of the burst, by completion (index = ms since start div 500). */
  timeline: Record<string, number>[]
  /**
   * With `quota`: answers whose `RateLimit` r= is above what can be left, quota − the 2xx answers
   * received before the request was sent (decided before it) − 1 if it was admitted. Sound only if
   * the burst's decisions fall in one aligned window of a key with nothing counted before it.
   */
  remainingAboveTruth: number
  /** The first such answer, `status r=… bound …`; '' when none. */
  firstAboveTruth: string
}

const spec = JSON.parse(process.argv[2] ?? '{}') as BurstSpec
const statuses: Record<string, number> = {}
const errors: Record<string, number> = {}
const latencies: number[] = []
const maxMsByStatus: Record<string, number> = {}
const timeline: Record<string, number>[] = []
let countsStale = 0
let bad503 = 0
let other5xx = 0
let next = 0
let admitted = 0
let remainingAboveTruth = 0
let firstAboveTruth = ''

/** Counts an answer whose RateLimit r= exceeds what can be left (see BurstReport.remainingAboveTruth). */
function checkRemaining(status: number, field: string | null, admittedBefore: number): void {
  if (spec.quota === undefined) return
  const ok = status >= 200 && status < 300
  const r = Number(/;r=(\d+)/.exec(field ?? '')?.[1] ?? Number.NaN)
  const bound = spec.quota - admittedBefore - (ok ? 1 : 0)
  if (Number.isNaN(r) || r > bound) {
    remainingAboveTruth++
    firstAboveTruth ||= `${status} r=${r} bound ${bound}`
  }
}

function bump(into: Record<string, number>, key: string): void {
  into[key] = (into[key] ?? 0) + 1
}

function agentFor(loop: number): Agent {
  const options = { keepAlive: true, maxSockets: spec.bases.length }
  if (!spec.spreadSources) return new Agent(options)
  const s = (spec.firstSource ?? 0) + loop
  const address = `127.${Math.floor(s / 62_500)}.${Math.floor(s / 250) % 250}.${(s % 250) + 2}`
  return new Agent({ ...options, localAddress: address })
}

function get(agent: Agent, url: string): Promise<{ status: number; headers: Headers; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: spec.headers, timeout: spec.timeoutMs }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () => {
        const headers = new Headers()
        for (const [name, value] of Object.entries(res.headers))
          if (typeof value === 'string') headers.set(name, value)
        resolve({ status: res.statusCode ?? 0, headers, body })
      })
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('client timeout')))
    req.on('error', reject)
    req.end()
  })
}

const started = performance.now()
const deadline = started + (spec.durationMs ?? Number.POSITIVE_INFINITY)

/** The timeline bucket of the present moment (responses are counted when they complete). */
function bucketNow(): Record<string, number> {
  const index = Math.floor((performance.now() - started) / 500)
  const bucket = timeline[index] ?? {}
  timeline[index] = bucket
  return bucket
}

function more(): number | undefined {
  if (spec.total !== undefined ? next >= spec.total : performance.now() >= deadline) return undefined
  return next++
}

async function loop(index: number): Promise<void> {
  const agent = agentFor(index)
  for (let i = more(); i !== undefined; i = more()) {
    const url = `${spec.bases[i % spec.bases.length]}${spec.paths[i % spec.paths.length]}`
    const t0 = performance.now()
    const admittedBefore = admitted
    try {
      const res = await get(agent, url)
      const ms = performance.now() - t0
      latencies.push(ms)
      maxMsByStatus[res.status] = Math.max(maxMsByStatus[res.status] ?? 0, Math.round(ms))
      if (res.status >= 200 && res.status < 300) admitted++
      checkRemaining(res.status, res.headers.get('ratelimit'), admittedBefore)
      bump(statuses, String(res.status))
      bump(bucketNow(), String(res.status))
      if (res.status >= 200 && res.status < 300 && res.body.includes('"countsStale":true')) countsStale++
      if (res.status === 503) {
        const problem = (res.headers.get('content-type') ?? '').startsWith('application/problem+json')
        if (!problem || !res.headers.has('retry-after')) bad503++
      } else if (res.status >= 500) other5xx++
    } catch (error) {
      bump(errors, (error as Error).message)
      bump(bucketNow(), 'error')
    }
  }
  agent.destroy()
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!)
}

report({ event: 'started', atMs: Date.now() })
await Promise.all(Array.from({ length: spec.concurrency }, (_, i) => loop(i)))
latencies.sort((a, b) => a - b)
const done: BurstReport = {
  event: 'done',
  requests: next,
  statuses,
  errors,
  countsStale,
  bad503,
  other5xx,
  p50Ms: percentile(latencies, 0.5),
  p99Ms: percentile(latencies, 0.99),
  maxMs: Math.round(latencies.at(-1) ?? 0),
  maxMsByStatus,
  wallMs: Math.round(performance.now() - started),
  timeline: Array.from(timeline, (b) => b ?? {}),
  remainingAboveTruth,
  firstAboveTruth,
}
report({ ...done })
