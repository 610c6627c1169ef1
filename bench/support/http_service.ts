import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { until } from '@floodgate/test-support'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** Whether `url` answers and `ok(status, body)` holds for the answer (false while it does not answer). */
function answersWith(url: string, ok: (status: number, body: string) => boolean): Promise<boolean> {
  return fetch(url)
    .then(async (r) => ok(r.status, await r.text()))
    .catch(() => false)
}

/** Polls `url` every 200 ms until `ok` holds for its answer. @throws naming `what` after 90 s. */
export function waitUntil(
  url: string,
  ok: (status: number, body: string) => boolean,
  what: string,
): Promise<number> {
  return until(() => answersWith(url, ok), { timeoutMs: 90_000, everyMs: 200, what: `${what} ready` })
}

/** Waits until video-api at `base` is ready and its Bloom replica loaded (built from the database at start). */
export async function videoApiReady(base: string, what: string): Promise<void> {
  await waitUntil(`${base}/readyz`, (status) => status === 200, what)
  await waitUntil(
    `${base}/metrics`,
    (_status, body) => /floodgate_bloom_replica_state\{filter="videos"\} 1\b/.test(body),
    `${what}: bloom replica`,
  )
}

/** GETs `/videos/<id>` of every id once, `connections` at a time (a warm-up, not measured). */
export async function sweep(base: string, ids: readonly string[], connections: number): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < ids.length) {
        const id = ids[next++]!
        await fetch(`${base}/videos/${id}`).then((r) => r.arrayBuffer())
      }
    }),
  )
}

/** What bench/http/get-video.ts prints for one run. */
export interface LoadSummary {
  totalRequests: number
  requestsPerSecond: number
  latencyMs: { p50: number; p99: number; mean: number }
  non2xx: number
}

/**
 * One closed-loop run of `GET /videos/:id`, Zipf(1) over the seeded popularity of `db`
 * (bench/http/get-video.ts, autocannon in its own process, never the service's).
 * @throws when the load process exits non-zero.
 */
export function zipfLoad(o: {
  base: string
  db: string
  durationS: number
  connections: number
}): Promise<LoadSummary> {
  const args = ['--import', 'tsx', 'bench/http/get-video.ts', '--url', o.base, '--db', o.db]
  args.push('--duration', String(o.durationS), '--connections', String(o.connections))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
    })
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as LoadSummary) : reject(new Error(`get-video.ts exited ${code}`)),
    )
  })
}

/** `K=V,K=V` (a bench's service environment overrides) as an object; pairs without `=` are skipped. */
export function envOverrides(pairs: string): Record<string, string> {
  return Object.fromEntries(
    pairs.split(',').flatMap((pair) => {
      const at = pair.indexOf('=')
      return at > 0 ? [[pair.slice(0, at).trim(), pair.slice(at + 1).trim()]] : []
    }),
  )
}
