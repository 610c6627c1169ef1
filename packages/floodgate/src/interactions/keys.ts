import { KeySpace } from '../redis/key_space.js'
import { integerIn } from '../validation/index.js'
import { INTERACTION_DEFAULTS } from './defaults.js'

const COUNTED = new Set(['likes', 'favorites', 'plays'])

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
 * | `<prefix>:ix:{ix:<p>}:likes:<itemId>` | SET of user ids |
 * | `<prefix>:ix:{ix:<p>}:favorites:<itemId>` | SET of user ids |
 * | `<prefix>:ix:{ix:<p>}:plays:<itemId>` | STRING counter |
 * | `<prefix>:ix:{ix:<p>}:seen:<itemId>:<g>:n` | STRING, viewer hashes in play-dedupe generation g (buckets: max(1, ⌈n / 128⌉)); TTL to the end of g + 1 |
 * | `<prefix>:ix:{ix:<p>}:seen:<itemId>:<g>:<bucket>` | SET (intset) of viewer hashes, one bucket of generation g; same TTL |
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

  plays(itemId: string): string {
    return this.ix(itemId, `plays:${itemId}`)
  }

  /**
   * Prefix of the item's play-dedupe keys (`play-5.lua` appends `<generation>:n` for the
   * generation's count of hashes and `<generation>:<bucket>` for its SETs of viewer hashes; same hash tag).
   */
  playSeenPrefix(itemId: string): string {
    return this.ix(itemId, `seen:${itemId}:`)
  }

  /** The item a {@link likes}, {@link favorites} or {@link plays} key counts, `undefined` for any other key. */
  countedItemOf(key: string): string | undefined {
    if (!key.startsWith(`${this.space.prefix}:ix:{ix:`)) return undefined
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
