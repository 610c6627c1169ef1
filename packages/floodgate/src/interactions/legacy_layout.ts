import { KeySpace } from '../redis/key_space.js'

/**
 * The interaction key layout before layout 2 (floodgate ≤ 2026-12-03), read only to migrate away
 * from it: 16 partitions tagged `{ix:<p>}` (item `i` in partition `i mod 16`), one SET per item
 * and kind, one dedupe key per viewer, and the data-loss marker `<prefix>:epoch`.
 *
 * | key | type |
 * |---|---|
 * | `<prefix>:ix:{ix:<p>}:stream` | STREAM of events, consumer group `flush` |
 * | `<prefix>:ix:{ix:<p>}:likes:<itemId>`, `…:favorites:…`, `…:plays:…`, `…:seen:…` | item state |
 * | `<prefix>:rank:{ix:<p>}:…` | ranking shards |
 * | `<prefix>:epoch` | STRING, data-loss marker |
 *
 * The dead-letter streams `<prefix>:ix:{ix:<p>}:dead` are not part of what the migration removes:
 * they hold entries an operator must still look at.
 */
export class LegacyInteractionKeys {
  /** Partitions of the legacy layout looked at: its default 16, or more (see the constructor). */
  readonly partitions: number
  private readonly space: KeySpace

  /**
   * @param partitions the partition count layout 2 runs with: the legacy layout is taken to have
   *   had max(16, partitions), its default or the same explicit setting (a deployment that lowered
   *   an explicit count in the same upgrade must drain by hand: docs/operations.md).
   * @throws {InvalidArgumentError} on an empty prefix.
   */
  constructor(prefix: string, partitions = 16) {
    this.space = new KeySpace(prefix)
    this.partitions = Math.max(16, partitions)
  }

  /** The event stream of legacy partition `p`. */
  stream(p: number): string {
    return this.space.tagged('ix', `ix:${p}`, 'stream')
  }

  /** The dead-letter stream of legacy partition `p` (kept by the migration). */
  dead(p: number): string {
    return this.space.tagged('ix', `ix:${p}`, 'dead')
  }

  /**
   * SCAN patterns of every legacy key of partition `p` (item state and ranking shards; streams
   * included). `}` closes the tag, so `{ix:1}` never matches `{ix:10}` nor a layout-2 tag.
   */
  patterns(p: number): string[] {
    const prefix = this.space.prefix
    return [`${prefix}:ix:{ix:${p}}:*`, `${prefix}:rank:{ix:${p}}:*`]
  }

  /** SCAN pattern of partition `p`'s per-minute trending buckets (`…:min:<metric>:<unixMinute>`). */
  minuteBuckets(p: number): string {
    return `${this.space.prefix}:rank:{ix:${p}}:min:*`
  }

  /** Where a minute bucket is moved before its entries are carried over (same slot, one mover). */
  moving(bucket: string): string {
    return bucket.replace(':min:', ':moving:')
  }

  /** The legacy data-loss marker. */
  epoch(): string {
    return `${this.space.prefix}:epoch`
  }

  /** Every legacy partition number. */
  allPartitions(): number[] {
    return Array.from({ length: this.partitions }, (_, p) => p)
  }
}
