import { createHash } from 'node:crypto'
import { execAll } from '../rankings/pipeline_results.js'
import { SlotBatch } from '../rankings/slot_batch.js'
import type { RedisClient } from '../redis/types.js'
import { MEMBER_BUCKET_DEFAULTS } from './defaults.js'
import type { InteractionKeys, MemberKind } from './keys.js'

/**
 * The bucket geometry of one item's members of one kind (`lua/includes/member-buckets.lua`,
 * linear hashing after Litwin 1980): `buckets = 2^level + split`. An item without a meta HASH has
 * one bucket (level 0, split 0) and `count` undefined (its count is SCARD of bucket 0).
 */
export interface BucketGeometry {
  /** The meta's exact member count; undefined while the item has one bucket. */
  count: number | undefined
  level: number
  split: number
  buckets: number
}

/** The members' hash the Lua side uses: the first 32 bits of SHA-1 (FIPS 180-4) of the member's string. */
export function memberHash(member: string): number {
  return Number.parseInt(createHash('sha1').update(member).digest('hex').slice(0, 8), 16)
}

/** The bucket of hash `h` at level `level` with split pointer `split` (linear hashing's address). */
export function bucketOf(h: number, level: number, split: number): number {
  const size = 2 ** level
  const a = h % size
  return a < split ? h % (size * 2) : a
}

/** The geometry from `HMGET <meta> n l s`. */
export function geometryOf(reply: readonly (string | null)[]): BucketGeometry {
  if (reply[0] === null || reply[0] === undefined) return { count: undefined, level: 0, split: 0, buckets: 1 }
  const level = Number(reply[1])
  const split = Number(reply[2])
  return { count: Number(reply[0]), level, split, buckets: 2 ** level + split }
}

/**
 * Reads the geometry of an item's buckets of `kind` (one HMGET).
 * @throws {Error} ioredis' error as it comes when Redis fails (callers guard).
 */
export async function readGeometry(
  redis: RedisClient,
  keys: InteractionKeys,
  kind: MemberKind,
  itemId: string,
): Promise<BucketGeometry> {
  return geometryOf(await redis.hmget(keys.memberMeta(kind, itemId), 'n', 'l', 's'))
}

/** Every bucket key of the geometry, bucket 0 first. */
export function bucketKeys(
  keys: InteractionKeys,
  kind: MemberKind,
  itemId: string,
  geometry: BucketGeometry,
): string[] {
  return Array.from({ length: geometry.buckets }, (_, i) => keys.memberBucket(kind, itemId, i))
}

/** Runs one command per key, `maxKeysPerUnlink` keys per pipeline (every key is in the item's slot). */
async function perBucket(
  redis: RedisClient,
  bucketKeyList: readonly string[],
  command: 'smembers' | 'scard',
  what: string,
): Promise<unknown[]> {
  const out: unknown[] = []
  const per = MEMBER_BUCKET_DEFAULTS.maxKeysPerUnlink
  for (let i = 0; i < bucketKeyList.length; i += per) {
    const batch = new SlotBatch(redis)
    for (const key of bucketKeyList.slice(i, i + per))
      batch.add(key, (p) => (command === 'smembers' ? p.smembers(key) : p.scard(key)))
    out.push(...(await batch.exec(what)))
  }
  return out
}

/**
 * Walks an item's buckets and returns its members (user ids, in no order): one HMGET, then one
 * SMEMBERS per bucket (each an intset of a few hundred members), pipelined, then the HMGET again;
 * a split in between (a concurrent toggle) makes it walk again, at most 3 times, then it answers
 * what the last walk saw. What reconcile and the benches read instead of one SMEMBERS.
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function readMembers(
  redis: RedisClient,
  keys: InteractionKeys,
  kind: MemberKind,
  itemId: string,
): Promise<string[]> {
  let geometry = await readGeometry(redis, keys, kind, itemId)
  for (let attempt = 0; ; attempt++) {
    const replies = await perBucket(
      redis,
      bucketKeys(keys, kind, itemId, geometry),
      'smembers',
      'read members',
    )
    const after = await readGeometry(redis, keys, kind, itemId)
    if ((after.level === geometry.level && after.split === geometry.split) || attempt === 2)
      return (replies as string[][]).flat()
    geometry = after
  }
}

/** What {@link countMembers} finds. */
export interface MemberCount {
  /** The count the reads serve: the meta's `n`, or SCARD of the one bucket. */
  counted: number
  /** The members really held: the sum of SCARD over the buckets. */
  held: number
}

/**
 * The counted and the held number of members of each item's `kind`: one pipelined round trip
 * (HMGET meta, SCARD bucket 0 per item), then a SCARD per bucket of the items that have more
 * than one. Not a snapshot while toggles run (reconcile runs on a drained stream).
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function countMembers(
  redis: RedisClient,
  keys: InteractionKeys,
  kind: MemberKind,
  itemIds: readonly string[],
): Promise<MemberCount[]> {
  const batch = new SlotBatch(redis)
  for (const id of itemIds) {
    const meta = keys.memberMeta(kind, id)
    const base = keys.members(kind, id)
    batch.add(meta, (p) => p.hmget(meta, 'n', 'l', 's'))
    batch.add(base, (p) => p.scard(base))
  }
  const replies = await batch.exec('count members')
  const out: MemberCount[] = []
  for (let i = 0; i < itemIds.length; i++) {
    const geometry = geometryOf(replies[i * 2] as (string | null)[])
    const scard = Number(replies[i * 2 + 1])
    if (geometry.count === undefined) {
      out.push({ counted: scard, held: scard })
      continue
    }
    const all = bucketKeys(keys, kind, itemIds[i]!, geometry)
    const cards = await perBucket(redis, all, 'scard', 'count members')
    out.push({ counted: geometry.count, held: cards.reduce<number>((a, c) => a + Number(c), 0) })
  }
  return out
}

/**
 * Deletes an item's members of `kind` in bounded steps: UNLINKs of at most `maxKeysPerUnlink`
 * (1,000) bucket keys each, the highest buckets first, then the meta and bucket 0 in the last
 * one, so no single command frees more than that many small keys (today's one SET of 1M members
 * was one 592 ms DEL). Stop the item's toggles first (unpublish): a toggle between the steps can
 * put a member back into a bucket the walk already passed.
 * @returns the keys UNLINK removed.
 * @throws {StoreUnavailableError} when Redis fails.
 */
export async function dropMembers(
  redis: RedisClient,
  keys: InteractionKeys,
  kind: MemberKind,
  itemId: string,
): Promise<number> {
  const geometry = await readGeometry(redis, keys, kind, itemId)
  const all = bucketKeys(keys, kind, itemId, geometry)
  const per = MEMBER_BUCKET_DEFAULTS.maxKeysPerUnlink
  let removed = 0
  for (let end = all.length; end > 1; end -= per) {
    const some = all.slice(Math.max(1, end - per), end)
    removed += await unlink(redis, some)
  }
  return removed + (await unlink(redis, [keys.memberMeta(kind, itemId), all[0]!]))
}

async function unlink(redis: RedisClient, some: readonly string[]): Promise<number> {
  const pipeline = redis.pipeline().unlink(...some)
  const [n] = await execAll(pipeline, 'drop members')
  return Number(n)
}
