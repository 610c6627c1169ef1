import { KeySpace } from '../redis/key_space.js'
import { integerIn } from '../validation/index.js'
import { INTERACTION_DEFAULTS } from './defaults.js'
import { partitionTags } from './partition_tags.js'

const COUNTED = new Set(['likes', 'favorites', 'plays'])

/** Memberships kept in buckets (see {@link InteractionKeys.members}). */
export type MemberKind = 'likes' | 'favorites'

/** Ranking metrics kept in Redis. */
export type RankMetric = 'likes' | 'plays'

/**
 * The interaction key layout shared by the write path, the flush, the read
 * path and the rebuild. Item `i` (the counted entity, e.g. a video) lives in
 * partition `p = i mod partitions`; every key about it, its partition's stream and its partition's ranking
 * shards carry the partition's hash tag `{<tag>}` = {@link tagOf}`(p)`, e.g. `{ix:7.bhto}`, so one
 * Lua step can touch them all on Redis Cluster while the load spreads over `partitions` slots,
 * evenly spaced over 0 … 16383 (see `partition_tags.ts`: partition p's slot is
 * `floor((p + 0.5) · 16384 / partitions)`).
 *
 * | key | type |
 * |---|---|
 * | `<prefix>:ix:{<tag>}:likes:<itemId>` | SET of user ids: bucket 0 (all of them while the item has one bucket) |
 * | `<prefix>:ix:{<tag>}:likes:<itemId>:<i>` | SET of user ids: bucket i >= 1 |
 * | `<prefix>:ix:{<tag>}:likes:<itemId>:m` | HASH `n` members, `l` level, `s` split pointer; absent with one bucket |
 * | `<prefix>:ix:{<tag>}:favorites:<itemId>[:<i> / :m]` | the same for favourites |
 * | `<prefix>:ix:{<tag>}:plays:<itemId>` | STRING counter |
 * | `<prefix>:ix:{<tag>}:seen:<itemId>:<g>:n` | STRING, viewer hashes in play-dedupe generation g (buckets: max(1, ⌈n / 128⌉)); TTL to the end of g + 1 |
 * | `<prefix>:ix:{<tag>}:seen:<itemId>:<g>:<bucket>` | SET (intset) of viewer hashes, one bucket of generation g; same TTL |
 * | `<prefix>:ix:{<tag>}:gone:<itemId>` | STRING tombstone of a forgotten item (`Interactions.forget`); TTL `tombstoneTtlMs` |
 * | `<prefix>:ix:{<tag>}:stream` | STREAM of events, consumer group `flush` |
 * | `<prefix>:ix:{<tag>}:dead` | STREAM of dead letters |
 * | `<prefix>:ix:{ix:flush}:members:<group>` | ZSET, flush consumers' heartbeats (partition assignment) |
 * | `<prefix>:rank:{<tag>}:all:<metric>` | ZSET, all-time top K |
 * | `<prefix>:rank:{<tag>}:min:<metric>:<unixMinute>` | ZSET, per-minute bucket |
 * | `<prefix>:rank:{top:<metric>:<window>:<limit>}` (+ `:lock`) | STRING, merged top of a trending window, all partitions (`rankings/ranking_keys.ts`) |
 * | `<prefix>:epoch:v2` | STRING, data-loss marker of layout 2 |
 *
 * Layout 2: the previous layout ({@link LegacyInteractionKeys}) kept its marker at `<prefix>:epoch`;
 * a new name means a Redis holding only layout-1 data reads as lost here, and is rebuilt from
 * PostgreSQL once `startLegacyLayoutDrain` has applied and removed the layout-1 streams.
 */
export class InteractionKeys {
  readonly space: KeySpace
  readonly partitions: number
  private readonly tags: readonly string[]

  /**
   * @param prefix the service's key prefix, e.g. `va`.
   * @param partitions number of partitions P (default 300, {@link INTERACTION_DEFAULTS}). Changing
   *   it moves items between streams and tags: drain the streams first (docs/operations.md).
   * @throws {InvalidArgumentError} on an empty prefix or a partition count outside [1, 16384].
   */
  constructor(prefix: string, partitions: number = INTERACTION_DEFAULTS.partitions) {
    integerIn('partitions', partitions, 1, 16384)
    this.space = new KeySpace(prefix)
    this.partitions = partitions
    this.tags = partitionTags(partitions)
  }

  /**
   * The hash tag (without braces) of partition `p`: `ix:<p>.<4 letters>`, whose cluster slot is
   * `floor((p + 0.5) · 16384 / partitions)` (pinned; see `partition_tags.ts`).
   * @throws {RangeError} when `p` is not a partition (0 … partitions − 1).
   */
  tagOf(p: number): string {
    const tag = this.tags[p]
    if (tag === undefined) throw new RangeError(`partition ${p} is not in 0 … ${this.partitions - 1}`)
    return tag
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
    return this.space.tagged('ix', this.tagOf(this.partitionOf(itemId)), suffix)
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

  /**
   * Prefix of the item's play-dedupe keys (`play-6.lua` appends `<generation>:n` for the
   * generation's count of hashes and `<generation>:<bucket>` for its SETs of viewer hashes; same hash tag).
   */
  playSeenPrefix(itemId: string): string {
    return this.ix(itemId, `seen:${itemId}:`)
  }

  /**
   * The tombstone of a forgotten item (STRING, with a TTL): while it exists, the toggle and play
   * scripts refuse the item's events and create none of its keys (`Interactions.forget`).
   */
  gone(itemId: string): string {
    return this.ix(itemId, `gone:${itemId}`)
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
    return this.space.tagged('ix', this.tagOf(p), 'stream')
  }

  /** The dead-letter stream of partition `p`. */
  dead(p: number): string {
    return this.space.tagged('ix', this.tagOf(p), 'dead')
  }

  /** The all-time ranking ZSET of partition `p`. */
  rankAll(p: number, metric: RankMetric): string {
    return this.space.tagged('rank', this.tagOf(p), `all:${metric}`)
  }

  /** Prefix of partition `p`'s per-minute bucket keys; the bucket is this plus the unix minute. */
  rankMinutePrefix(p: number, metric: RankMetric): string {
    return this.space.tagged('rank', this.tagOf(p), `min:${metric}:`)
  }

  /** The per-minute bucket ZSET of partition `p` for `unixMinute` (= floor(unix seconds / 60)). */
  rankMinute(p: number, metric: RankMetric, unixMinute: number): string {
    return `${this.rankMinutePrefix(p, metric)}${unixMinute}`
  }

  /**
   * The flush consumers' member set of consumer group `group` (heartbeats; partition assignment).
   * Its own tag `{ix:flush}`, no partition's: one small key, one heartbeat per consumer
   * per `maintenanceIntervalMs`, so where it lands does not matter for the spread.
   */
  flushMembers(group: string): string {
    return this.space.tagged('ix', 'ix:flush', `members:${group}`)
  }

  /** The data-loss marker key (layout 2). */
  epoch(): string {
    return `${this.space.prefix}:epoch:v2`
  }
}
