/**
 * Issue 26, even spread on a cluster: every Redis command the interaction write path sends (the
 * EVALSHA and each command its script runs, from `INFO commandstats`) for likes and plays over
 * 10,000 videos with the defaults, placed by slot on M masters with an even slot split
 * (redis-cli's), for M = 3, 6, 10, 30, 100: the busiest master's share over the mean and the idle
 * masters, for the layout before issue 26 (16 partitions, tag `{ix:<v mod 16>}`) and the current
 * one (`INTERACTION_DEFAULTS.partitions`, tag `InteractionKeys.tagOf(p)`), in the same run.
 *
 *   npm run bench:spread [-- --per-video 3]
 *
 * Method: a private redis-server (nothing else talks to it). Video v (1 … 10,000) gets
 * PER_VIDEO likes by distinct users and PER_VIDEO plays by distinct viewers through
 * `Interactions.setLiked` / `recordPlay` with the defaults. The events run in groups of the
 * videos with the same `v mod 1200` (1200 = lcm(16, 300)), so a group lies in one partition of
 * either layout; after each group `INFO commandstats` gives the commands it cost (all calls but
 * INFO itself). Every command of an event runs in its partition's slot (one script, keys of one
 * tag: test/cluster/crossslot.test.ts), and how many commands an event costs does not depend on
 * the tag text, so the same counts placed by the old and the new tag give both layouts.
 * Writes bench/results/spread.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { PrivateRedis, spreadOver } from '@floodgate/test-support'
import { INTERACTION_DEFAULTS, type InteractionKeys, Interactions, keySlot, playViewer } from 'floodgate'
import { Redis } from 'ioredis'

const { values: args } = parseArgs({ options: { 'per-video': { type: 'string', default: '3' } } })
const PER_VIDEO = Number(args['per-video'])
const VIDEOS = 10_000
const GROUPS = 1200
const OLD_PARTITIONS = 16
const MASTERS = [3, 6, 10, 30, 100]
const USERS = 100_000

/** Total calls in `INFO commandstats`, INFO itself left out. */
async function commandCalls(redis: Redis): Promise<number> {
  const info = await redis.info('commandstats')
  let total = 0
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (match[1] !== 'info') total += Number(match[2])
  }
  return total
}

const server = await PrivateRedis.start()
const redis = new Redis(server.url)
try {
  const interactions = new Interactions(redis, { prefix: 'spread' })
  const keys: InteractionKeys = interactions.keys
  const partitions = keys.partitions
  const oldSlot = (v: number) => keySlot(`{ix:${v % OLD_PARTITIONS}}`)
  const newSlot = (v: number) => keySlot(keys.stream(keys.partitionOf(String(v))))
  const oldLoads = new Map<number, number>()
  const newLoads = new Map<number, number>()
  const add = (loads: Map<number, number>, slot: number, n: number) =>
    loads.set(slot, (loads.get(slot) ?? 0) + n)
  let likes = 0
  let plays = 0
  let commands = 0
  let before = await commandCalls(redis)
  for (let g = 0; g < GROUPS; g++) {
    const videos: number[] = []
    for (let v = g === 0 ? GROUPS : g; v <= VIDEOS; v += GROUPS) videos.push(v)
    await Promise.all(
      videos.map(async (v) => {
        for (let j = 0; j < PER_VIDEO; j++) {
          const user = String(((v * 7919 + j * 104_729) % USERS) + 1)
          await interactions.setLiked(String(v), user, true)
          await interactions.recordPlay(String(v), playViewer({ userId: user }))
          likes++
          plays++
        }
      }),
    )
    const after = await commandCalls(redis)
    const spent = after - before
    before = after
    commands += spent
    add(oldLoads, oldSlot(g), spent)
    add(newLoads, newSlot(g), spent)
  }
  const rows = MASTERS.map((m) => ({
    masters: m,
    before: spreadOver(m, oldLoads),
    after: spreadOver(m, newLoads),
  }))
  const fmt = (r: { maxOverMean: number; idle: number }) =>
    `${r.maxOverMean.toFixed(2)}× ${r.idle > 0 ? `(${r.idle} idle)` : ''}`.trim()
  console.log(
    `write path: ${likes} likes + ${plays} plays over ${VIDEOS} videos, ${commands} Redis commands ` +
      `(${(commands / (likes + plays)).toFixed(2)} per event, scripts' own commands included)`,
  )
  console.log(
    `\n| masters | before: ${OLD_PARTITIONS} partitions, {ix:<p>} | after: ${partitions} partitions, pinned tags |`,
  )
  console.log('|---|---|---|')
  for (const r of rows) console.log(`| ${r.masters} | ${fmt(r.before)} | ${fmt(r.after)} |`)
  console.log('\n(busiest master / mean, idle masters; even slot split as redis-cli --cluster create)')
  mkdirSync('bench/results', { recursive: true })
  writeFileSync(
    'bench/results/spread.json',
    `${JSON.stringify(
      {
        videos: VIDEOS,
        likes,
        plays,
        commands,
        defaults: { partitions: INTERACTION_DEFAULTS.partitions },
        rows: rows.map((r) => ({
          masters: r.masters,
          before: { maxOverMean: r.before.maxOverMean, idle: r.before.idle },
          after: { maxOverMean: r.after.maxOverMean, idle: r.after.idle },
        })),
      },
      null,
      2,
    )}\n`,
  )
} finally {
  redis.disconnect()
  await server.destroy()
}
