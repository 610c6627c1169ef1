/**
 * Likes of one viral item, old layout beside the new one in the same run (issue 25):
 *
 *   node --conditions=floodgate-source --import tsx bench/viral/likes.ts [--likers 200000] [--in-flight 64]
 *
 * A private redis-server (its set-max-intset-entries read with CONFIG GET, never set). Per
 * design, on a fresh prefix: LIKERS distinct users like item 1 through the toggle script, IN_FLIGHT
 * calls in flight; "old" is the toggle as shipped before (bench/viral/lua/legacy-toggle-4.lua: one
 * SET), "single" is `Interactions.setLiked` with `maxEventsPerCall: 1` (toggle-5.lua per like:
 * linear-hashed intset buckets + meta), "batched" is `Interactions.setLiked` with the defaults
 * (the likes of one poll phase as one toggle-batch-n.lua call per partition).
 * Reported: bytes per like (MEMORY USAGE summed over the item's membership keys ÷ likers), the
 * largest key, the number of keys, Redis CPU per like (INFO commandstats: usec of EVALSHA and
 * EVAL, which include every command the scripts run, over the likes; CONFIG RESETSTAT before each
 * design), the redis-server process's CPU per like (INFO cpu, user + system: sockets and parsing
 * included, not stretched when the box is busy as usec is), the script calls,
 * the slowest command of deleting the item's members (SLOWLOG, threshold 0 for that step: old one
 * DEL, new dropMembers' UNLINKs) and, new design, of restoring them all again from a list in bounded
 * steps (restoreMembersOf, what the rebuild runs per page). Redis CPU holds on a busy box where
 * rates and SLOWLOG times do not.
 *
 * Writes bench/results/viral-likes.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { PrivateRedis } from '@floodgate/test-support'
import { bucketKeys, dropMembers, Interactions, LuaScript, readGeometry, toMember } from 'floodgate'
import { Redis } from 'ioredis'
import { restoreMembersOf } from '../../packages/floodgate/src/counters/rebuild.js'
import { memoryOf } from '../scenarios/viral_redis.js'

const { values: args } = parseArgs({
  options: { likers: { type: 'string', default: '200000' }, 'in-flight': { type: 'string', default: '64' } },
})
const LIKERS = Number(args.likers)
const IN_FLIGHT = Number(args['in-flight'])
const ITEM = '1'
const legacyToggle = new LuaScript(new URL('./lua/legacy-toggle-4.lua', import.meta.url))

type Design = 'old' | 'single' | 'batched'

interface Figures {
  design: Design
  likers: number
  keys: number
  bytes: number
  bytesPerLike: number
  largestKeyBytes: number
  usecPerLike: number
  /** redis-server's own CPU (INFO cpu, user + system) per like: not stretched by preemption. */
  serverCpuUsPerLike: number
  scriptCalls: number
  likesPerSecondWall: number
  dropSlowestUs: number
  dropCommands: number
  /** "batched" only (restores run the same code in both bucket designs): restoring the LIKERS from a list in bounded steps (restoreMembersOf, merge). */
  restoreSteps?: number
  restoreMedianUs?: number
  restoreSlowestUs?: number
}

/** Runs `step(i)` for i in [0, n) with `inFlight` calls in flight. */
async function closedLoop(n: number, inFlight: number, step: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < n) await step(next++)
    }),
  )
}

/** CPU seconds the redis-server process has used (user + system). */
async function serverCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu')
  const field = (name: string) => Number(new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1] ?? Number.NaN)
  return field('used_cpu_user') + field('used_cpu_sys')
}

/** Script calls (EVALSHA and EVAL, a NOSCRIPT reload) and their Redis µs since CONFIG RESETSTAT. */
async function scriptUsec(redis: Redis): Promise<{ calls: number; usec: number }> {
  const info = await redis.info('commandstats')
  let calls = 0
  let usec = 0
  for (const cmd of ['evalsha', 'eval']) {
    const m = new RegExp(`^cmdstat_${cmd}:calls=(\\d+),usec=(\\d+)`, 'm').exec(info)
    calls += Number(m?.[1] ?? 0)
    usec += Number(m?.[2] ?? 0)
  }
  return { calls, usec }
}

/**
 * SLOWLOG with threshold 0 around `step`: the top-level commands' (EVALSHA, DEL, UNLINK; Redis 7.0
 * logs the commands a script runs too) slowest and median µs, and how many ran. Wall-clock: on a
 * busy box a command descheduled midway reads long.
 */
async function timed(
  redis: Redis,
  step: () => Promise<unknown>,
): Promise<{ maxUs: number; medianUs: number; commands: number }> {
  await redis.config('SET', 'slowlog-log-slower-than', '0')
  await redis.config('SET', 'slowlog-max-len', '2000000')
  await redis.slowlog('RESET')
  await step()
  const entries = (await redis.slowlog('GET', 2_000_000)) as [number, number, number, string[]][]
  await redis.config('SET', 'slowlog-log-slower-than', '10000')
  const us = entries
    .filter((e) => ['evalsha', 'del', 'unlink'].includes(String(e[3][0]).toLowerCase()))
    .map((e) => e[2])
    .sort((a, b) => a - b)
  return { maxUs: us[us.length - 1] ?? 0, medianUs: us[Math.floor(us.length / 2)] ?? 0, commands: us.length }
}

async function runDesign(redis: Redis, design: Design): Promise<Figures> {
  const ix = new Interactions(redis, {
    prefix: `viral-${design}`,
    partitions: 16,
    ...(design === 'single' ? { maxEventsPerCall: 1 } : {}),
  })
  const buckets = design !== 'old'
  await ix.setLiked('2', '1', true) // loads the script, on another item
  const k = ix.keys
  const p = k.partitionOf(ITEM)
  const user = (i: number) => String(1_000_000 + i)
  await redis.config('RESETSTAT')
  const cpuBefore = await serverCpuSeconds(redis)
  const started = performance.now()
  await closedLoop(LIKERS, IN_FLIGHT, (i) =>
    buckets
      ? ix.setLiked(ITEM, user(i), true)
      : legacyToggle.run(
          redis,
          [k.likes(ITEM), k.rankAll(p, 'likes'), k.rankMinutePrefix(p, 'likes'), k.stream(p)],
          [user(i), '1', ITEM, toMember(ITEM), 'like', 1000, '1', 86_400_000],
        ),
  )
  const seconds = (performance.now() - started) / 1000
  const serverCpuUs = ((await serverCpuSeconds(redis)) - cpuBefore) * 1e6
  const cpu = await scriptUsec(redis)
  const geometry = await readGeometry(redis, k, 'likes', ITEM)
  const keys = buckets
    ? [...bucketKeys(k, 'likes', ITEM, geometry), k.memberMeta('likes', ITEM)]
    : [k.likes(ITEM)]
  const memory = await memoryOf(redis, keys)
  const drop = await timed(redis, () =>
    buckets ? dropMembers(redis, k, 'likes', ITEM) : redis.del(k.likes(ITEM)),
  )
  const users = Array.from({ length: LIKERS }, (_, i) => user(i))
  const restore =
    design === 'batched'
      ? await timed(redis, () =>
          restoreMembersOf({ redis, keys: k, topK: 1000 }, 'likes', ITEM, users, 'merge'),
        )
      : undefined
  return {
    design,
    likers: LIKERS,
    keys: buckets ? geometry.buckets + 1 : 1,
    bytes: memory.total,
    bytesPerLike: Number((memory.total / LIKERS).toFixed(2)),
    largestKeyBytes: memory.largest,
    usecPerLike: Number((cpu.usec / LIKERS).toFixed(2)),
    serverCpuUsPerLike: Number((serverCpuUs / LIKERS).toFixed(2)),
    scriptCalls: cpu.calls,
    likesPerSecondWall: Math.round(LIKERS / seconds),
    dropSlowestUs: drop.maxUs,
    dropCommands: drop.commands,
    restoreSteps: restore?.commands,
    restoreMedianUs: restore?.medianUs,
    restoreSlowestUs: restore?.maxUs,
  }
}

const server = await PrivateRedis.start()
const redis = new Redis(server.url)
try {
  const [, intsetMax] = (await redis.config('GET', 'set-max-intset-entries')) as [string, string]
  const results: Figures[] = []
  for (const design of ['old', 'single', 'batched'] as const) {
    results.push(await runDesign(redis, design))
    console.log(JSON.stringify(results[results.length - 1]))
  }
  console.table(results)
  const [, single, batched] = results
  const ratio = (batched!.usecPerLike / single!.usecPerLike).toFixed(2)
  console.log(
    `Redis µs per like, batched / single: ${ratio} (${batched!.usecPerLike} / ${single!.usecPerLike})`,
  )
  console.log(`set-max-intset-entries = ${intsetMax}`)
  mkdirSync(new URL('../results/', import.meta.url), { recursive: true })
  writeFileSync(
    new URL('../results/viral-likes.json', import.meta.url),
    `${JSON.stringify({ at: new Date().toISOString(), likers: LIKERS, inFlight: IN_FLIGHT, intsetMax, results }, null, 2)}\n`,
  )
} finally {
  redis.disconnect()
  await server.destroy()
}
