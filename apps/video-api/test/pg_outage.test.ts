// Issue 31, "PostgreSQL down": two main.ts instances lose PostgreSQL for longer than the
// user-confirmation window while likes, cold reads and warm reads run. Nothing may answer 500;
// likes (which need Redis only) are acknowledged throughout, by users the instances confirmed
// before the outage (whose confirmation expires during it) and by users whose first write comes
// during the outage; a read that needs PostgreSQL answers 503 UNAVAILABLE with Retry-After; after
// PostgreSQL returns, it holds exactly the acknowledged likes. The test prints the answers per
// phase (before, during, after the outage) and kind of request.
//
// How PostgreSQL is made unreachable: the instances reach the shared server through a TCP proxy
// in this process (support/pg_proxy.ts) that the test breaks (port closed: ECONNREFUSED; open
// connections reset mid-query) and restores. The shared server other test files use is never
// stopped, and this file's checks read it directly.
//
// Real main.ts processes with the default configuration except (startServices lists every
// override): the proxy's DATABASE_URL and a schema of this file, a private redis-server (below;
// the default REDIS_PREFIX on it), a data folder of its own (the JWT secret both instances read),
// LOG_LEVEL=warn (the outage's log lines are checked), and AUTH_KNOWN_USER_TTL_MS = 3 s instead
// of 60 s: the outage must outlast the window, and 12 s of outage proves that as well as 65 s
// would, at a fifth of the test's time.
// The private Redis: the shared one, under the other suites of a loaded box, answered in 57 ms on
// average (redis-cli --latency, load 45), past the service's 50 ms Redis timeout; a cached read
// whose Redis read times out goes to PostgreSQL, which is down here, so on the shared Redis the
// test measured its neighbours. Server only (several processes share one database; PGlite is one
// process's, and has no server to lose); not on the Redis Cluster pass (the outage is
// PostgreSQL's; the instances' Redis topology does not change what they do without it).
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { PrivateRedis, TEST_DATABASE_URL } from '@floodgate/test-support'
import { InteractionKeys } from 'floodgate'
import { Redis } from 'ioredis'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTokenService } from '../src/auth/tokens.js'
import { fields } from '../src/config/fields.js'
import { DB_OUTAGE_LOG_INTERVAL_MS } from '../src/db/outage_log.js'
import { dropSchema, testDbKind, uniqueSchema } from './support/database.js'
import { PgProxy } from './support/pg_proxy.js'
import { TEST_REDIS_CLUSTER_NODES } from './support/redis.js'
import { killServices, type ServiceProcess, startServices } from './support/service_processes.js'
import { runWorker } from './support/workers.js'
import type { OutageKind, OutageLoadSpec, OutageRecord, OutageReport } from './workers/outage_client.js'

const INSTANCES = 2
/** AUTH_KNOWN_USER_TTL_MS of the instances (ms): see the header for why not the default. */
const CONFIRM_WINDOW_MS = 3_000
/**
 * Load before the outage, the outage, load after it (ms): each phase lasts at least this, and
 * until the load shows what the phase is for (see `until` below), at most PHASE_MAX_MS: on a box
 * loaded enough to stall the client for seconds, the phases stretch instead of coming out empty.
 */
const BEFORE_MS = 5_000
const OUTAGE_MS = 12_000
const AFTER_MS = 6_000
const PHASE_MAX_MS = 40_000
/** Likers per group: confirmed by their instance before the outage, or writing first during it. */
const LIKERS_PER_GROUP = 12
/** One acknowledged toggle per liker per this (ms): 24 writes per minute stay in the default write quota (30). */
const LIKE_EVERY_MS = 1_200
const READERS = 3
/** One read per reader per this (ms): 200 per minute stay in the default anonymous quota (300 per IP). */
const READ_EVERY_MS = 300
const WARM_VIDEOS = 40
/** Seeded users and videos (defaults of SEED_USERS and SEED_VIDEOS: enough never-read ids). */
const SEED_USERS = Number(fields.seedUsers.default)

const skip = testDbKind === 'pglite' || TEST_REDIS_CLUSTER_NODES !== undefined
const schema = uniqueSchema('pgdown')
let dataDir = ''
let server: PrivateRedis | undefined
let redis: Redis | undefined
let proxy: PgProxy | undefined
let pool: pg.Pool | undefined
let services: ServiceProcess[] = []

beforeAll(async () => {
  if (skip) return
  dataDir = mkdtempSync(join(tmpdir(), 'va-pgdown-'))
  proxy = await PgProxy.start()
  pool = new pg.Pool({ connectionString: TEST_DATABASE_URL, max: 2 })
  server = await PrivateRedis.start()
  redis = new Redis(server.url, { maxRetriesPerRequest: 1 })
  services = await startServices(INSTANCES, {
    DATABASE_URL: proxy.url(),
    DB_SCHEMA: schema,
    REDIS_URL: server.url,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    AUTH_KNOWN_USER_TTL_MS: String(CONFIRM_WINDOW_MS),
  })
}, 180_000)

afterAll(async () => {
  await killServices(services)
  await proxy?.close()
  await pool?.end()
  redis?.disconnect()
  await server?.destroy() // its keys go with it
  if (dataDir !== '') rmSync(dataDir, { recursive: true, force: true })
  if (!skip) await dropSchema(schema)
})

type Phase = 'before' | 'outage' | 'after' | 'across'

/** The phase a request belongs to: wholly before, inside or after the outage, or across an edge. */
function phaseOf(record: OutageRecord, breakAt: number, restoreAt: number): Phase {
  const [, , startMs, endMs] = record
  if (endMs < breakAt) return 'before'
  if (startMs >= breakAt && endMs <= restoreAt) return 'outage'
  if (startMs >= restoreAt) return 'after'
  return 'across'
}

/** Status counts per phase and kind: `{ outage: { cold: { '503 UNAVAILABLE': 87 } } }`. */
function table(records: readonly OutageRecord[], breakAt: number, restoreAt: number) {
  const out: Record<Phase, Partial<Record<OutageKind, Record<string, number>>>> = {
    before: {},
    outage: {},
    after: {},
    across: {},
  }
  for (const r of records) {
    const phase = out[phaseOf(r, breakAt, restoreAt)]
    const row = phase[r[0]] ?? {}
    phase[r[0]] = row
    const key = r[4] === 0 ? `error ${r[5]}` : r[5] === '' ? String(r[4]) : `${r[4]} ${r[5]}`
    row[key] = (row[key] ?? 0) + 1
  }
  return out
}

/** Flush entries written before `t` (ms epoch) still pending or undelivered, over all partitions. */
async function backlogBefore(keys: InteractionKeys, t: number): Promise<number> {
  let n = 0
  for (const p of keys.allPartitions()) {
    const stream = keys.stream(p)
    const groups = (await redis!.xinfo('GROUPS', stream).catch(() => [])) as unknown[][]
    const flush = groups.find((g) => g[1] === 'flush')
    if (!flush) continue
    const lastDelivered = String(flush[flush.indexOf('last-delivered-id') + 1])
    const pending = (await redis!.xpending(stream, 'flush', '-', `${t}`, 1_000)) as unknown[]
    const undelivered = await redis!.xrange(stream, `(${lastDelivered}`, `${t}`)
    n += pending.length + undelivered.length
  }
  return n
}

describe.skipIf(skip)('PostgreSQL unreachable for longer than the user-confirmation window', () => {
  it('answers no 500, keeps acknowledging likes, and PostgreSQL holds them after it returns', async () => {
    const db = pool!
    const q = async <R extends pg.QueryResultRow>(text: string, params: unknown[] = []) =>
      (await db.query<R>(text, params)).rows
    const bases = services.map((s) => s.base)
    const { rows: videoRows } = await db.query<{ id: string }>(
      `SELECT id::text AS id FROM "${schema}".videos
        WHERE status = 'published' AND visibility = 'public' AND deleted_at IS NULL ORDER BY id`,
    )
    const ids = videoRows.map((r) => r.id)
    const likerVideos = ids.slice(0, 2 * LIKERS_PER_GROUP)
    const warmIds = ids.slice(2 * LIKERS_PER_GROUP, 2 * LIKERS_PER_GROUP + WARM_VIDEOS)
    const coldIds = ids.slice(2 * LIKERS_PER_GROUP + WARM_VIDEOS)
    const users = (await q<{ id: string }>(`SELECT id::text AS id FROM "${schema}".users ORDER BY id`)).map(
      (r) => r.id,
    )
    expect(users.length).toBe(SEED_USERS)
    // setup, not under test: tokens as POST /auth/login issues them (the instances' secret and
    // audience), without paying the memory-hard KDF and the auth quota for 24 users
    const [meta] = await q<{ installation_id: string }>(
      `SELECT installation_id FROM "${schema}".service_meta`,
    )
    const tokens = createTokenService(
      readFileSync(join(dataDir, 'jwt-secret'), 'utf8').trim(),
      Number(fields.jwtTtlS.default),
      meta!.installation_id,
    )
    // liker i: user i, video i, instance i mod 2; the first group likes before the load and
    // throughout, the second only once the outage began
    const likers = likerVideos.map((videoId, i) => ({
      userId: users[i]!,
      token: tokens.issue(users[i]!),
      videoId,
      base: bases[i % INSTANCES]!,
      liked: false,
      confirmed: i < LIKERS_PER_GROUP,
    }))

    // warm: every video the load reads as warm (and the likers' own) is in L2 and each L1
    for (const base of bases)
      for (const id of [...likerVideos, ...warmIds])
        expect((await fetch(`${base}/videos/${id}`)).status).toBe(200)
    for (const l of likers.filter((l) => l.confirmed)) {
      const res = await fetch(`${l.base}/videos/${l.videoId}/like`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${l.token}` },
      })
      expect(res.status).toBe(200)
      l.liked = true
    }

    const keys = new InteractionKeys(fields.redisPrefix.default, Number(fields.interactionPartitions.default))
    const spec: OutageLoadSpec = {
      bases,
      likers: likers.map(({ token, videoId, base, liked, confirmed }) => ({
        token,
        videoId,
        base,
        liked,
        late: !confirmed,
      })),
      likeEveryMs: LIKE_EVERY_MS,
      warmIds,
      coldIds,
      readers: READERS,
      readEveryMs: READ_EVERY_MS,
      probeEveryMs: 500,
      timeoutMs: Number(fields.requestTimeoutMs.default),
    }
    let breakAt = Number.POSITIVE_INFINITY
    let restoreAt = Number.POSITIVE_INFINITY
    let catchUpMs: number | undefined
    const records: OutageRecord[] = []
    /** At least `minMs` from `fromMs`, then until `done()` holds; at most PHASE_MAX_MS. */
    const until = async (fromMs: number, minMs: number, done: () => boolean) => {
      while (Date.now() - fromMs < PHASE_MAX_MS && (Date.now() - fromMs < minMs || !done())) await sleep(100)
    }
    /** Each liker (of the first group only, with `confirmedOnly`) has an ack of a like started at or after `fromMs`. */
    const likersAcked = (fromMs: number, confirmedOnly = false) =>
      likers.every(
        (l, i) =>
          (confirmedOnly && !l.confirmed) ||
          records.some((r) => r[0] === 'like' && r[1] === i && r[4] === 200 && r[2] >= fromMs),
      )
    /** A request of `kind` started at or after `fromMs` got an answer (or failed). */
    const some = (kind: OutageKind, fromMs: number) => records.some((r) => r[0] === kind && r[2] >= fromMs)
    let phases: Promise<void> = Promise.resolve()
    let worker: ChildProcess | undefined
    const reports = await runWorker(
      new URL('./workers/outage_client.ts', import.meta.url),
      [JSON.stringify(spec)],
      (m) => {
        if (m.event === 'record') records.push(m.record as OutageRecord)
        if (m.event !== 'started') return
        const startedAt = Date.now()
        phases = (async () => {
          try {
            await until(startedAt, BEFORE_MS, () => likersAcked(startedAt, true) && some('cold', startedAt))
            breakAt = Date.now()
            await proxy!.break()
            worker!.stdin!.write('outage\n')
            // past the confirmation window, every liker acknowledged; cold and warm reads seen
            const pastWindow = breakAt + CONFIRM_WINDOW_MS + 1_000
            await until(
              breakAt,
              OUTAGE_MS,
              () => likersAcked(pastWindow) && some('cold', breakAt) && some('warm', breakAt),
            )
            await proxy!.restore()
            restoreAt = Date.now()
            await until(restoreAt, AFTER_MS, () => some('cold', restoreAt + 1_000))
          } finally {
            await proxy!.restore()
            worker!.stdin!.write('stop\n')
          }
          // the flush caught up: no entry written before PostgreSQL returned is still unapplied
          while (Date.now() - restoreAt < 30_000) {
            if ((await backlogBefore(keys, restoreAt)) === 0) {
              catchUpMs = Date.now() - restoreAt
              break
            }
            await sleep(100)
          }
        })()
      },
      (child) => {
        worker = child
      },
    )
    await phases
    const report = reports.find((m) => m.event === 'done') as OutageReport | undefined
    if (!report) throw new Error(`the load client reported no result: ${JSON.stringify(reports.at(-1))}`)
    const { finalLiked } = report
    const inPhase = (kind: OutageKind, phase: Phase) =>
      records.filter((r) => r[0] === kind && phaseOf(r, breakAt, restoreAt) === phase)

    // PostgreSQL after the drain: each liker's row exists iff its last acknowledged state is liked
    const expected = likers.map((l, i) => ({ videoId: l.videoId, userId: l.userId, liked: finalLiked[i]! }))
    const inPg = async () => {
      const rows = await q<{ video_id: string; user_id: string; like_count: string }>(
        `SELECT v.id::text AS video_id, l.user_id::text AS user_id, v.like_count::text AS like_count
           FROM "${schema}".videos v LEFT JOIN "${schema}".video_likes l ON l.video_id = v.id
          WHERE v.id = ANY($1::bigint[])`,
        [likerVideos],
      )
      return expected.map((e) => {
        const row = rows.find((r) => r.video_id === e.videoId)
        return { ...e, liked: row?.user_id === e.userId, likeCount: Number(row?.like_count) }
      })
    }
    const drainStarted = Date.now()
    let pgState = await inPg()
    const matches = () =>
      pgState.every((s, i) => s.liked === expected[i]!.liked && s.likeCount === (s.liked ? 1 : 0))
    while (!matches() && Date.now() - drainStarted < 30_000) {
      await sleep(200)
      pgState = await inPg()
    }
    // Redis's counts (through the API) agree
    const redisLikes = await Promise.all(
      likers.map(
        async (l) =>
          ((await (await fetch(`${l.base}/videos/${l.videoId}/stats`)).json()) as { likes: number }).likes,
      ),
    )

    const ackedInOutage = inPhase('like', 'outage').filter((r) => r[4] === 200)
    const pastWindow = breakAt + CONFIRM_WINDOW_MS + 1_000
    const ackedPastWindow = likers.map(
      (_, i) => ackedInOutage.filter((r) => r[1] === i && r[2] >= pastWindow).length,
    )
    // the instances' log lines (LOG_LEVEL=warn) by level and message (the first line kept may be cut)
    const logLines: Record<string, number> = {}
    for (const line of services.flatMap((s) => s.output().split('\n'))) {
      let parsed: { level?: number; msg?: string } | undefined
      try {
        parsed = JSON.parse(line) as { level?: number; msg?: string }
      } catch {
        continue
      }
      const key = `${parsed.level} ${parsed.msg}`
      logLines[key] = (logLines[key] ?? 0) + 1
    }
    const lines = (message: string) =>
      Object.entries(logLines).reduce((n, [key, count]) => n + (key.includes(message) ? count : 0), 0)
    const summary = {
      outageMs: restoreAt - breakAt,
      catchUpMs,
      drainMs: Date.now() - drainStarted,
      likesAcked: records.filter((r) => r[0] === 'like' && r[4] === 200).length,
      likesAckedInOutage: ackedInOutage.length,
      ackedPastWindow,
      logLines,
      phases: table(records, breakAt, restoreAt),
    }
    console.log(JSON.stringify(summary))
    const fiveHundreds = records.filter((r) => r[4] >= 500 && r[4] !== 503)
    expect.soft(fiveHundreds.length, '5xx other than 503').toBe(0)
    expect.soft(records.filter((r) => r[4] === 0).length, 'requests without an answer').toBe(0)
    const bad503 = records.filter(
      (r) => r[0] !== 'readyz' && r[4] === 503 && !(r[6] && ['UNAVAILABLE', 'OVERLOADED'].includes(r[5])),
    )
    expect.soft(bad503.length, '503 without a code or Retry-After').toBe(0)
    // during the outage: likes of both groups acknowledged, also past the confirmation window
    expect.soft(inPhase('like', 'outage').filter((r) => r[4] !== 200 && r[4] !== 429).length).toBe(0)
    expect
      .soft(ackedPastWindow.filter((n) => n === 0).length, 'likers without an ack past the window')
      .toBe(0)
    // warm reads answer from the cache; cold reads need PostgreSQL: 503 UNAVAILABLE with Retry-After
    const warm = inPhase('warm', 'outage')
    expect.soft(warm.length).toBeGreaterThan(0)
    expect.soft(warm.filter((r) => r[4] !== 200).length).toBe(0)
    const cold = inPhase('cold', 'outage')
    expect.soft(cold.length).toBeGreaterThan(0)
    expect.soft(cold.filter((r) => !(r[4] === 503 && r[5] === 'UNAVAILABLE' && r[6])).length).toBe(0)
    expect.soft(inPhase('readyz', 'outage').filter((r) => r[4] !== 503).length).toBe(0)
    expect.soft(inPhase('healthz', 'outage').filter((r) => r[4] !== 200).length).toBe(0)
    // a second after PostgreSQL returned, cold reads answer 200 again
    const coldAfter = inPhase('cold', 'after').filter((r) => r[2] >= restoreAt + 1_000)
    expect.soft(coldAfter.length).toBeGreaterThan(0)
    expect.soft(coldAfter.filter((r) => r[4] !== 200).length).toBe(0)
    // nothing lost: PostgreSQL and Redis hold each liker's last acknowledged state
    expect.soft(pgState).toEqual(expected.map((e) => ({ ...e, likeCount: e.liked ? 1 : 0 })))
    expect.soft(redisLikes).toEqual(expected.map((e) => (e.liked ? 1 : 0)))
    expect.soft(catchUpMs, 'the flush caught up after PostgreSQL returned').toBeDefined()
    // an outage is a warning, one line per reason per 10 s per instance, not a request bug
    expect.soft(lines('request failed')).toBe(0)
    const outageLines = lines('PostgreSQL cannot be reached')
    expect.soft(outageLines).toBeGreaterThanOrEqual(INSTANCES)
    expect
      .soft(outageLines)
      .toBeLessThanOrEqual(INSTANCES * 2 * (Math.ceil(OUTAGE_MS / DB_OUTAGE_LOG_INTERVAL_MS) + 1))
  }, 240_000) // about 40 s; more only when the box stalls the load (PHASE_MAX_MS per phase)
})
