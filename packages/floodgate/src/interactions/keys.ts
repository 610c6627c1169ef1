import { KeySpace } from '../redis/key_space.js'
import { integerIn } from '../validation/index.js'
import { interactionDefaults } from './options.js'

/** Ranking metrics kept in Redis. */
export type RankMetric = 'likes' | 'plays'

/**
 * The interaction key layout shared by the write path, the flush, the read
 * path and the rebuild. Video `v` lives in partition `p = v mod partitions`;
 * every key about it, its partition's stream and its partition's ranking
 * shards carry the hash tag `{ix:<p>}`, so one Lua step can touch them all on
 * Redis Cluster while the load spreads over `partitions` slots.
 *
 * | key | type |
 * |---|---|
 * | `<prefix>:ix:{ix:<p>}:likes:<videoId>` | SET of user ids |
 * | `<prefix>:ix:{ix:<p>}:favorites:<videoId>` | SET of user ids |
 * | `<prefix>:ix:{ix:<p>}:plays:<videoId>` | STRING counter |
 * | `<prefix>:ix:{ix:<p>}:seen:<videoId>:<viewer>` | STRING, play dedupe, TTL = dedupe window |
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
   * @param partitions number of partitions P (default 16). Changing it moves videos between streams; drain the streams first.
   * @throws {InvalidArgumentError} on an empty prefix or a partition count outside [1, 16384].
   */
  constructor(prefix: string, partitions: number = interactionDefaults.partitions) {
    integerIn('partitions', partitions, 1, 16384)
    this.space = new KeySpace(prefix)
    this.partitions = partitions
  }

  /** The partition of a video: `videoId mod partitions` (`videoId` is a canonical decimal string). */
  partitionOf(videoId: string): number {
    return Number(BigInt(videoId) % BigInt(this.partitions))
  }

  /** Every partition number, 0 … P-1. */
  allPartitions(): number[] {
    return Array.from({ length: this.partitions }, (_, p) => p)
  }

  private ix(videoId: string, suffix: string): string {
    return this.space.tagged('ix', `ix:${this.partitionOf(videoId)}`, suffix)
  }

  likes(videoId: string): string {
    return this.ix(videoId, `likes:${videoId}`)
  }

  favorites(videoId: string): string {
    return this.ix(videoId, `favorites:${videoId}`)
  }

  plays(videoId: string): string {
    return this.ix(videoId, `plays:${videoId}`)
  }

  seen(videoId: string, viewer: string): string {
    return this.ix(videoId, `seen:${videoId}:${viewer}`)
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
