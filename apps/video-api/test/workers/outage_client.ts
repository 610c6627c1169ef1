import { Agent, request } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import { report } from '../support/workers.js'

/**
 * Worker: the clients of test/pg_outage.test.ts, in their own process so the test process (which
 * carries the PostgreSQL proxy) is not also the load. Until the test writes `stop` on stdin, it
 * runs, each as a closed loop:
 * - one liker per entry of `likers` (a `late` one only once the test wrote `outage` on stdin):
 *   toggles the like of its own video on its own instance (PUT, DELETE, PUT, …), one acknowledged
 *   toggle every `likeEveryMs`; a 503 or 429 is retried with the same state after its
 *   `Retry-After` (capped at 1 s), as a well-behaved client does;
 * - `readers` loops reading `warmIds` (read before the load) and as many reading `coldIds`, each
 *   of these once (never read before, so each is a cache miss that needs PostgreSQL), one request
 *   every `readEveryMs`, each loop from its own source address (127.1.0.x: the anonymous per-IP
 *   quota is not what is tested);
 * - one prober per instance: `/readyz` and `/healthz` every `probeEveryMs`.
 * Reports JSON lines: `{ event: 'started' }`, then `{ event: 'record', record }` as each request
 * completes (a {@link OutageRecord}: the test moves to the next phase on progress, not on the
 * clock alone), then one {@link OutageReport}.
 */
export interface OutageLoadSpec {
  bases: string[]
  /** `liked`: the state before the load. */
  likers: { token: string; videoId: string; base: string; liked: boolean; late: boolean }[]
  likeEveryMs: number
  warmIds: string[]
  coldIds: string[]
  readers: number
  readEveryMs: number
  probeEveryMs: number
  /** Per-request timeout (ms); a request past it is a client error. */
  timeoutMs: number
}

export type OutageKind = 'like' | 'warm' | 'cold' | 'readyz' | 'healthz'

/**
 * One request: kind, index of the liker or reader, start and end (ms epoch), status (0: no answer),
 * the problem `code` (or the client error) or '', whether a `Retry-After` came with it, and for a
 * 200 like the state.
 */
export type OutageRecord = [
  kind: OutageKind,
  client: number,
  startMs: number,
  endMs: number,
  status: number,
  code: string,
  retryAfter: boolean,
  liked: boolean | null,
]

export interface OutageReport {
  event: 'done'
  /** Per liker (in `likers` order): the state of its last 200. */
  finalLiked: boolean[]
}

const spec = JSON.parse(process.argv[2] ?? '{}') as OutageLoadSpec
let stopped = false
let outageStarted = () => {}
const outage = new Promise<void>((resolve) => {
  outageStarted = resolve
})
let nextCold = 0
let input = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (chunk: string) => {
  input += chunk
  if (input.includes('outage\n')) outageStarted()
  if (input.includes('stop\n')) {
    stopped = true
    outageStarted() // a late liker that never started ends at once
    process.stdin.destroy()
  }
})
// the test process died: stop too
process.stdin.on('end', () => {
  stopped = true
  outageStarted()
})

interface Answer {
  status: number
  retryAfterS: number | undefined
  body: string
}

function send(agent: Agent, method: string, url: string, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
    const req = request(url, { method, agent, headers, timeout: spec.timeoutMs }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
      })
      res.on('end', () => {
        const retryAfter = res.headers['retry-after']
        resolve({
          status: res.statusCode ?? 0,
          retryAfterS: retryAfter === undefined ? undefined : Number(retryAfter),
          body,
        })
      })
      res.on('error', reject)
    })
    req.on('timeout', () => req.destroy(new Error('client timeout')))
    req.on('error', reject)
    req.end()
  })
}

/** Sends one request and reports it; `undefined` when it got no answer. */
async function recorded(
  kind: OutageKind,
  client: number,
  agent: Agent,
  method: string,
  url: string,
  token?: string,
): Promise<Answer | undefined> {
  const startMs = Date.now()
  let record: OutageRecord
  let answer: Answer | undefined
  try {
    answer = await send(agent, method, url, token)
    let code = ''
    let liked: boolean | null = null
    if (answer.status >= 400) code = String((JSON.parse(answer.body) as { code?: unknown }).code ?? '')
    else if (kind === 'like') liked = (JSON.parse(answer.body) as { liked: boolean }).liked
    record = [kind, client, startMs, Date.now(), answer.status, code, answer.retryAfterS !== undefined, liked]
  } catch (error) {
    record = [kind, client, startMs, Date.now(), 0, (error as Error).message, false, null]
  }
  report({ event: 'record', record })
  return answer
}

async function liker(index: number, finalLiked: boolean[]): Promise<void> {
  const { token, videoId, base, late } = spec.likers[index]!
  if (late) await outage
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  let want = !finalLiked[index]
  while (!stopped) {
    const method = want ? 'PUT' : 'DELETE'
    const answer = await recorded('like', index, agent, method, `${base}/videos/${videoId}/like`, token)
    if (answer?.status === 200) {
      finalLiked[index] = (JSON.parse(answer.body) as { liked: boolean }).liked
      want = !want
      await sleep(spec.likeEveryMs)
    } else await sleep(Math.min(1000, (answer?.retryAfterS ?? 1) * 1000))
  }
  agent.destroy()
}

async function reader(kind: 'warm' | 'cold', index: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, localAddress: `127.1.${kind === 'warm' ? 0 : 1}.${index + 2}` })
  for (let i = index; !stopped; i++) {
    const id = kind === 'warm' ? spec.warmIds[i % spec.warmIds.length] : spec.coldIds[nextCold++]
    if (id === undefined) throw new Error('out of cold ids: pass more')
    await recorded(kind, index, agent, 'GET', `${spec.bases[i % spec.bases.length]}/videos/${id}`)
    await sleep(spec.readEveryMs)
  }
  agent.destroy()
}

async function prober(index: number): Promise<void> {
  const agent = new Agent({ keepAlive: true })
  while (!stopped) {
    await recorded('readyz', index, agent, 'GET', `${spec.bases[index]}/readyz`)
    await recorded('healthz', index, agent, 'GET', `${spec.bases[index]}/healthz`)
    await sleep(spec.probeEveryMs)
  }
  agent.destroy()
}

const finalLiked = spec.likers.map((l) => l.liked)
report({ event: 'started', atMs: Date.now() })
await Promise.all([
  ...spec.likers.map((_, i) => liker(i, finalLiked)),
  ...Array.from({ length: spec.readers }, (_, i) => reader('warm', i)),
  ...Array.from({ length: spec.readers }, (_, i) => reader('cold', i)),
  ...spec.bases.map((_, i) => prober(i)),
])
const done: OutageReport = { event: 'done', finalLiked }
report({ ...done })
