import { createRequire } from 'node:module'
import { benchIp } from './context.js'
import { expectedIntervalMs, type Recorder } from './recorder.js'

const require = createRequire(import.meta.url)
type RawRequest = { method?: string; path?: string; headers?: Record<string, string> }
interface Instance {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void
  on(event: 'reqError', listener: (error: Error) => void): void
}
const autocannon = require('autocannon') as (
  options: Record<string, unknown>,
  done: (error: Error | null, result: { requests: { sent: number } }) => void,
) => Instance

/** One request the generator chose. */
export interface RequestSpec {
  method: 'GET' | 'PUT' | 'DELETE' | 'POST'
  path: string
  headers?: Record<string, string>
}

export interface LoadOptions {
  /** video-api base URLs; the load is split evenly over them (one autocannon per instance). */
  bases: readonly string[]
  /** Connections in total. */
  connections: number
  durationS: number
  /** Offered load in total (req/s); undefined = as fast as the connections go (closed loop). */
  rate?: number
  /**
   * Requests in total, split evenly over the instances: the load ends when they are answered or at
   * `durationS`, whichever comes first (autocannon checks once a second). Undefined = `durationS` only.
   */
  amount?: number
  next: () => RequestSpec
  recorder: Recorder
}

/**
 * HTTP load with autocannon (programmatic API, in this process: never the
 * service's). Every answer goes to `recorder` with its latency; with a `rate`,
 * also with the expected interval between two requests of one connection, so
 * the recorder corrects for coordinated omission. Resolves when the duration is over.
 */
export async function load(options: LoadOptions): Promise<void> {
  const n = options.bases.length
  const rate = options.rate ? Math.max(1, Math.round(options.rate / n)) : undefined
  // autocannon lowers the connections to the rate when the rate is smaller (run.js)
  const connections = Math.min(Math.max(1, Math.round(options.connections / n)), rate ?? Infinity)
  const interval = expectedIntervalMs(connections, rate)
  const share = (i: number) =>
    options.amount === undefined
      ? undefined
      : Math.floor(options.amount / n) + (i < options.amount % n ? 1 : 0)
  await Promise.all(
    options.bases.map(
      (base, i) =>
        new Promise<void>((resolve, reject) => {
          const max = share(i)
          if (max === 0) return resolve()
          const instance = autocannon(
            {
              url: base,
              // autocannon gives each connection its share of maxOverallRequests: none may get 0
              connections: Math.min(connections, max ?? Infinity),
              duration: options.durationS,
              ...(rate ? { overallRate: rate } : {}),
              ...(max === undefined ? {} : { maxOverallRequests: max }),
              timeout: 10,
              requests: [
                {
                  setupRequest: (req: RawRequest) => {
                    const spec = options.next()
                    req.method = spec.method
                    req.path = spec.path
                    req.headers = spec.headers ?? {}
                    return req
                  },
                },
              ],
            },
            (error, result) => {
              if (error) return reject(error)
              options.recorder.sent += result.requests.sent
              resolve()
            },
          )
          instance.on('response', (_client, status, _bytes, ms) =>
            options.recorder.response(status, ms, interval),
          )
          instance.on('reqError', () => options.recorder.error())
        }),
    ),
  )
}

/**
 * GETs of `paths` with `concurrency` in flight, round-robin over `bases` (warming a cache "at once").
 * With `deadline` (a `performance.now()` time, ms) no request starts after it.
 * Resolves with the requests that failed and those sent.
 */
export async function burst(
  bases: readonly string[],
  paths: readonly string[],
  concurrency: number,
  deadline = Infinity,
): Promise<{ failed: number; sent: number }> {
  let next = 0
  let failed = 0
  let sent = 0
  await Promise.all(
    Array.from({ length: concurrency }, async (_, w) => {
      for (let i = next++; i < paths.length && performance.now() < deadline; i = next++) {
        sent++
        const res = await fetch(`${bases[(i + w) % bases.length]}${paths[i]}`, {
          headers: { 'x-forwarded-for': benchIp() },
        }).catch(() => undefined)
        if (!res?.ok) failed++
        await res?.arrayBuffer()
      }
    }),
  )
  return { failed, sent }
}
