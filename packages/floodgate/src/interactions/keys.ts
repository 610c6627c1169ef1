import { KeySpace } from '../redis/key_space.js'
import { integerIn } from '../validation/index.js'
import { INTERACTION_DEFAULTS } from './defaults.js'

const COUNTED = new Set(['likes', 'favorites', 'plays'])

/** Memberships kept in buckets (see {@link InteractionKeys.members}). */
export type MemberKind = 'likes' | 'favorites'

/** Ranking metrics kept in Redis. */
export type RankMetric = 'likes' | 'plays'

/**
 * The interaction key layout shared by the write path, the flush, the read
 * path and the rebuild. Item `i` (the counted entity, e.g. a video) lives in
 * partition `p = i mod partitions`; every key about it, its partition's stream and its partition's ranking
 * shards carry the hash tag `{ix:<p>}`, so one Lua step can touch them all on
 * Redis Cluster while the load spreads over `partitions` slots.
 *
 * | key | type |
 * |---|---|
 * | `<prefix>:ix:{ix:<p>}:likes:<itemId>` | SET of user ids: bucket 0 (all of them while the item has one bucket) |
 * | `<prefix>:ix:{ix:<p>}:likes:<itemId>:<i>` | SET of user ids: bucket i >= 1 |
 * | `<prefix>:ix:{ix:<p>}:likes:<itemId>:m` | HASH `n` members, `l` level, `s` split pointer; absent with one bucket |
 * | `<prefix>:ix:{ix:<p>}:favorites:<itemId>[:<i> / :m]` | the same for favourites |
 * | `<prefix>:ix:{ix:<p>}:plays:<itemId>` | STRING counter |
 * | `<prefix>:ix:{ix:<p>}:seen:<itemId>:<viewer>` | STRING, play dedupe, TTL = dedupe window |
 * | `<prefix>:ix:{ix:<p>}:stream` | STREAM of events, consumer group `flush` |
 * | `<prefix>:ix:{ix:<p>}:dead` | STREAM of dead letters |
 * | `<prefix>:ix:{ix:flush}:members:<group>` | ZSET, flush consumers' heartbeats (partition assignment) |
 * | `<prefix>:rank:{ix:<p>}:all:<metric>` | ZSET, all-time top K |
 * | `<prefix>:rank:{ix:<p>}:min:<metric>:<unixMinute>` | ZSET, per-minute bucket |
 * | `<prefix>:rank:{ix:<p>}:win:<metric>:<window>` | ZSET, cached windowed merge |
 * | `<prefix>:epoch` | STRING, data-loss marker |
 */
export class InteractionKeys {
  readonly space: KeySpace
  readonly partitions: number

  /**
   * @param prefix the service's key prefix, e.g. `va`.
   * @param partitions number of partitions P (default 16). Changing it moves items between streams; drain the streams first.
   * @throws {InvalidArgumentError} on an empty prefix or a partition count outside [1, 16384].
   */
  constructor(prefix: string, partitions: number = INTERACTION_DEFAULTS.partitions) {
    integerIn('partitions', partitions, 1, 16384)
    this.space = new KeySpace(prefix)
    this.partitions = partitions
  }

  /** The partition of an item: `itemId mod partitions` (`itemId` is a canonical decimal string). */
  partitionOf(itemId: string): number {
    return Number(BigInt(itemId) % BigInt(this.partitions))
  }

  /** Every partition number, 0 … P-1. */
  allPartitions(): number[] {
    return Array.from({ length: this.partitions }, (_, p) => p)
  }

  private ix(itemId: string, suffix: string): string {
    return this.space.tagged('ix', `ix:${this.partitionOf(itemId)}`, suffix)
  }

  likes(itemId: string): string {
    return this.ix(itemId, `likes:${itemId}`)
  }

  favorites(itemId: string): string {
    return this.ix(itemId, `favorites:${itemId}`)
  }

  /**
   * Bucket 0 of an item's members of `kind` (= {@link likes} / {@link favorites}), and the base
   * its other buckets and its meta are named from (`lua/includes/member-buckets.lua`).
   */
  members(kind: MemberKind, itemId: string): string {
    return this.ix(itemId, `${kind}:${itemId}`)
  }

  /** Bucket `i` (0 ≤ i < 2^l + s) of an item's members of `kind`: SET of user ids; 0 is {@link members}. */
  memberBucket(kind: MemberKind, itemId: string, i: number): string {
    return i === 0 ? this.members(kind, itemId) : this.ix(itemId, `${kind}:${itemId}:${i}`)
  }

  /** The meta HASH of an item's buckets of `kind`: `n` exact count, `l` level, `s` split pointer. */
  memberMeta(kind: MemberKind, itemId: string): string {
    return this.ix(itemId, `${kind}:${itemId}:m`)
  }

  plays(itemId: string): string {
    return this.ix(itemId, `plays:${itemId}`)
  }

  seen(itemId: string, viewer: string): string {
    return this.ix(itemId, `seen:${itemId}:${viewer}`)
  }

  /**
   * The item a {@link likes}, {@link favorites}, {@link memberMeta} or {@link plays} key counts,
   * `undefined` for any other key.
   */
  countedItemOf(key: string): string | undefined {
    if (!key.startsWith(`${this.space.prefix}:ix:{ix:`)) return undefined
    if (key.endsWith(':m')) return this.countedItemOf(key.slice(0, -2))
    const idAt = key.lastIndexOf(':')
    const kind = key.slice(key.lastIndexOf(':', idAt - 1) + 1, idAt)
    return COUNTED.has(kind) ? key.slice(idAt + 1) : undefined
  }

  /** The event stream of partition `p`. */
  stream(p: number): string {
    return this.space.tagged('ix', `ix:${p}`, 'stream')
  }

  /** The dead-letter stream of partition `p`. */
  dead(p: number): string {
    return this.space.tagged('ix', `ix:${p}`, 'dead')
  }

  /** The all-time ranking ZSET of partition `p`. */
  rankAll(p: number, metric: RankMetric): string {
    return this.space.tagged('rank', `ix:${p}`, `all:${metric}`)
  }

  /** Prefix of partition `p`'s per-minute bucket keys; the bucket is this plus the unix minute. */
  rankMinutePrefix(p: number, metric: RankMetric): string {
    return this.space.tagged('rank', `ix:${p}`, `min:${metric}:`)
  }

  /** The per-minute bucket ZSET of partition `p` for `unixMinute` (= floor(unix seconds / 60)). */
  rankMinute(p: number, metric: RankMetric, unixMinute: number): string {
    return `${this.rankMinutePrefix(p, metric)}${unixMinute}`
  }

  /** The short-lived cached windowed ranking of partition `p`. */
  rankWindow(p: number, metric: RankMetric, window: string): string {
    return this.space.tagged('rank', `ix:${p}`, `win:${metric}:${window}`)
  }

  /** The flush consumers' member set of consumer group `group` (heartbeats; partition assignment). */
  flushMembers(group: string): string {
    return this.space.tagged('ix', 'ix:flush', `members:${group}`)
  }

  /** The data-loss marker key. */
  epoch(): string {
    return `${this.space.prefix}:epoch`
  }
}
