import { toMember } from '../rankings/member.js'
import { execAll } from '../rankings/pipeline_results.js'
import { timeReplyMs } from '../rankings/time_reply.js'
import type { RedisClient } from '../redis/types.js'
import { FORGET_DEFAULTS, MEMBER_BUCKET_DEFAULTS, PLAY_DEDUPE_DEFAULTS } from './defaults.js'
import type { InteractionKeys } from './keys.js'
import { dropMembers } from './member_buckets.js'

/** What {@link forgetItem} needs of the write path's options. */
export interface ForgetSettings {
  /** The write path's dedupe window W (ms): the seen-set generations are `floor(Redis time / W)`. */
  playDedupeWindowMs: number
  /** The write path's minute-bucket TTL (ms): how far back minute buckets may still hold the item. */
  bucketTtlMs: number
  /** Life of the tombstone (ms). @default 3,600,000 ({@link FORGET_DEFAULTS}) */
  tombstoneTtlMs?: number
}

/** What {@link forgetItem} did. */
export interface ForgetReport {
  /** Keys its UNLINKs removed (member buckets and metas, the play counter, seen-set keys). */
  unlinked: number
  /** ZREMs of the item from ranking ZSETs (all-time and minute buckets) that removed it. */
  unranked: number
}

/**
 * Removes an item's interaction state from Redis in bounded steps, and keeps it out:
 *
 * 1. `SET <gone> 1 PX tombstoneTtlMs`: from here on `toggle-5.lua`, `play-6.lua` and the batch
 *    scripts refuse the item's events (they answer -1, {@link ItemGoneError}) and create no key.
 *    The restore scripts (`restore-members-4.lua`, `restore-plays-3.lua`) refuse it too, so a
 *    rebuild or a recovery's restore does not bring it back while the tombstone stands.
 *    Redis runs scripts one at a time, so every toggle either ran before this SET (the walk below
 *    sees what it wrote) or after it (refused): none can re-create a key behind the walk. The
 *    other choice, a walk that runs again after a grace period, leaves the item's keys
 *    re-creatable between the walks and needs a scheduler that survives restarts; the tombstone
 *    costs one EXISTS per item per script call, in a slot the call touches anyway.
 * 2. Likes and favourites: {@link dropMembers} (UNLINKs of at most `maxKeysPerUnlink` keys).
 * 3. Play dedupe: the seen-set keys of the generations that can still hold any (the current one
 *    by Redis TIME, read after step 1, and the one before: older ones have expired), their bucket
 *    count from each generation's `n`, UNLINKed at most `maxKeysPerUnlink` at a time; then the
 *    play counter.
 * 4. Rankings: ZREM of the item from the partition's all-time ZSETs and from every minute bucket
 *    that may still exist (the last `bucketTtlMs` + 2 minutes), pipelined at most
 *    `maxCommandsPerStep` ZREMs (each O(log n) on a ZSET of at most topK / one minute's items).
 *
 * Each step is one command of at most 1,000 keys or one pipeline of small commands: well under
 * 10 ms of Redis time. Idempotent: run it again after a crash midway. Left as they are: the
 * merged trending tops (`rankings/ranking_keys.ts`, recomputed within their freshness period),
 * log-space decayed rankings (written by the application, not this write path), the partition's
 * restore markers (they expire; a marker left keeps a recovery from restoring the item) and its
 * events already in the stream (the flush applies them to the database: its rows are the
 * caller's to delete with the item).
 * @returns what it removed.
 * @throws {StoreUnavailableError} when Redis fails (nothing to undo: run it again).
 */
export async function forgetItem(
  redis: RedisClient,
  keys: InteractionKeys,
  itemId: string,
  settings: ForgetSettings,
): Promise<ForgetReport> {
  const ttl = settings.tombstoneTtlMs ?? FORGET_DEFAULTS.tombstoneTtlMs
  await execAll(redis.pipeline().set(keys.gone(itemId), '1', 'PX', ttl), 'forget: tombstone')
  let unlinked = 0
  for (const kind of ['likes', 'favorites'] as const) unlinked += await dropMembers(redis, keys, kind, itemId)
  const [time] = await execAll(redis.pipeline().time(), 'forget: time')
  const nowMs = timeReplyMs(time)
  const g = Math.floor(nowMs / settings.playDedupeWindowMs)
  const prefix = keys.playSeenPrefix(itemId)
  const counts = await execAll(
    redis
      .pipeline()
      .get(`${prefix}${g - 1}:n`)
      .get(`${prefix}${g}:n`),
    'forget: seen counts',
  )
  const doomed = [keys.plays(itemId)]
  for (const [i, generation] of [g - 1, g].entries()) {
    const n = Number(counts[i] ?? 0)
    const buckets = Math.max(1, Math.ceil(n / PLAY_DEDUPE_DEFAULTS.bucketLoad))
    doomed.push(`${prefix}${generation}:n`)
    for (let b = 0; b < buckets; b++) doomed.push(`${prefix}${generation}:${b}`)
  }
  const per = MEMBER_BUCKET_DEFAULTS.maxKeysPerUnlink
  for (let i = 0; i < doomed.length; i += per) {
    const [n] = await execAll(redis.pipeline().unlink(...doomed.slice(i, i + per)), 'forget: unlink')
    unlinked += Number(n)
  }
  const unranked = await removeFromRankings(redis, keys, itemId, nowMs, settings.bucketTtlMs)
  return { unlinked, unranked }
}

/** ZREMs of the item from its partition's ranking ZSETs, pipelined in bounded steps; @returns how many removed it. */
async function removeFromRankings(
  redis: RedisClient,
  keys: InteractionKeys,
  itemId: string,
  nowMs: number,
  bucketTtlMs: number,
): Promise<number> {
  const p = keys.partitionOf(itemId)
  const member = toMember(itemId)
  // a bucket of minute m gets its TTL within m, so it is gone by (m + 1) · 60 s + bucketTtlMs
  const last = Math.floor(nowMs / 60_000)
  const first = Math.floor((nowMs - bucketTtlMs) / 60_000) - 1
  const zsets = [keys.rankAll(p, 'likes'), keys.rankAll(p, 'plays')]
  for (let m = first; m <= last; m++)
    zsets.push(keys.rankMinute(p, 'likes', m), keys.rankMinute(p, 'plays', m))
  const per = FORGET_DEFAULTS.maxCommandsPerStep
  let removed = 0
  for (let i = 0; i < zsets.length; i += per) {
    const pipeline = redis.pipeline()
    for (const zset of zsets.slice(i, i + per)) pipeline.zrem(zset, member)
    for (const n of await execAll(pipeline, 'forget: rankings')) removed += Number(n)
  }
  return removed
}
